// The organization registry on its own: what it keeps (hashes, never credentials), what it
// refuses (with stable codes, the file unchanged), and how a change made by another process
// (the CLI) reaches a running server's registry.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { ORGS_FILE, OrgRegistry } from '../../src/server/org-registry'
import { checkVisibility } from '../../src/sync/visibility'

let dir: string
let file: string

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'cairn-orgs-'))
  file = join(dir, ORGS_FILE)
})
afterEach(() => rmSync(dir, { recursive: true, force: true }))

describe('the organization registry', () => {
  it('keeps only the sha256 of a member credential, and knows the member by it', () => {
    const orgs = new OrgRegistry(file)
    const org = orgs.create('  Acme  ')
    expect(org).toMatchObject({ name: 'Acme', members: [] })
    const { credential, member } = orgs.addMember(org.id, { kind: 'agent', name: 'planner' })
    expect(credential).toMatch(/^cairn_member_[A-Za-z0-9_-]{43}$/)
    const text = readFileSync(file, 'utf8')
    expect(text).not.toContain(credential)
    expect(text).toContain(member.credentialHash)
    expect(orgs.verify(credential)).toMatchObject({ org: { id: org.id }, member: { id: member.id, kind: 'agent', removedAt: null } })
    expect(orgs.verify(`${credential}x`)).toBeNull()
    expect(orgs.verify('')).toBeNull()
  })

  it('refuses bad input with a stable code and leaves the file as it was', () => {
    const orgs = new OrgRegistry(file)
    const org = orgs.create('Acme')
    const before = readFileSync(file, 'utf8')
    expect(() => orgs.create('   ')).toThrow(expect.objectContaining({ code: 'invalid_request' }))
    expect(() => orgs.create('x'.repeat(201))).toThrow(expect.objectContaining({ code: 'invalid_request' }))
    expect(() => orgs.addMember('org-missing', { kind: 'device', name: 'phone' })).toThrow(expect.objectContaining({ code: 'not_found' }))
    expect(() => orgs.addMember(org.id, { kind: 'robot' as never, name: 'phone' })).toThrow(expect.objectContaining({ code: 'invalid_request' }))
    expect(() => orgs.removeMember(org.id, 'mem-missing')).toThrow(expect.objectContaining({ code: 'not_found' }))
    expect(readFileSync(file, 'utf8')).toBe(before)
  })

  it('a removal is for good, reported once, and reaches another instance (the CLI) on reload', () => {
    const server = new OrgRegistry(file)
    const org = server.create('Acme')
    const { credential, member } = server.addMember(org.id, { kind: 'device', name: 'laptop' })
    const removed: string[] = []
    server.onMemberRemoved((_o, m) => removed.push(m.id))

    const cli = new OrgRegistry(file)
    const gone = cli.removeMember(org.id, member.id)
    expect(gone.removedAt).not.toBeNull()
    expect(cli.removeMember(org.id, member.id).removedAt).toBe(gone.removedAt)
    expect(server.isActive(org.id, member.id)).toBe(true)
    server.reloadIfChanged()
    expect(removed).toEqual([member.id])
    expect(server.isActive(org.id, member.id)).toBe(false)
    expect(server.verify(credential)?.member.removedAt).toBe(gone.removedAt)
    server.reload()
    expect(removed).toEqual([member.id])
  })

  it('an unreadable file is a storage error naming the way out, not an empty registry', () => {
    writeFileSync(file, '{ not json')
    expect(() => new OrgRegistry(file)).toThrow(expect.objectContaining({ code: 'storage_failed', message: expect.stringContaining('restore it from a backup') }))
  })
})

describe('a visibility in the sync document', () => {
  it('accepts private and organization values only, under its one key', () => {
    expect(checkVisibility('memory', { visibility: 'private', orgId: null, name: 'diary' }).ok).toBe(true)
    expect(checkVisibility('memory', { visibility: 'organization', orgId: 'org-1a2b', name: 'handbook' }).ok).toBe(true)
    expect(checkVisibility('other', { visibility: 'private', orgId: null, name: 'diary' }).ok).toBe(false)
    expect(checkVisibility('memory', { visibility: 'organization', orgId: null, name: 'handbook' }).ok).toBe(false)
    expect(checkVisibility('memory', { visibility: 'private', orgId: 'org-1', name: 'diary' }).ok).toBe(false)
    expect(checkVisibility('memory', { visibility: 'public', orgId: null, name: 'diary' }).ok).toBe(false)
    expect(checkVisibility('memory', { visibility: 'private', orgId: null, name: '' }).ok).toBe(false)
    expect(checkVisibility('memory', { visibility: 'private', orgId: null, name: 'diary', extra: 1 }).ok).toBe(false)
  })
})
