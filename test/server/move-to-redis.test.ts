// Moving a single sync server's data directory into Redis (`move-to-redis`), against a real
// data directory a file-store server wrote and a throwaway redis-server on 127.0.0.1: after the
// move a server on Redis serves the same notes to the old tokens, refuses the revoked one and
// the removed member, lists the listed memory to an active member and keeps each device's
// client ids its own; a second run moves nothing; a record Redis holds differently is refused,
// reported and left as it is while the rest moves; a bad data directory or Redis is refused.
import { createHash } from 'node:crypto'
import { execFile } from 'node:child_process'
import { appendFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import { WebSocket } from 'ws'
import * as Y from 'yjs'
import type { ConnectionRecord } from '../../src/core/types'
import { silentLog } from '../../src/server/log'
import { moveToRedis, type MoveReport } from '../../src/server/move-to-redis'
import type { Organization } from '../../src/server/org-registry'
import { RedisAccess } from '../../src/server/redis-access'
import { connectRedis } from '../../src/server/redis-connection'
import { RedisOrgMemoryIndex, RedisOrgs } from '../../src/server/redis-orgs'
import { RedisClientOwners } from '../../src/server/redis-owners'
import { startSyncServer, type SyncServer } from '../../src/server/sync-server'
import { connectMemoryDoc, type SyncClient } from '../../src/sync/client'
import { denied, listing } from '../support/sync-denials'
import { CLOSE } from '../../src/sync/close-codes'
import { createMemoryDoc, readMemoryDoc } from '../../src/sync/memory-doc'
import { writeVisibility } from '../../src/sync/visibility'
import { putObservation } from '../helpers/doc-writes'
import { asClient, refusedAs, send } from '../hostile/peer'
import { startRedis } from '../support/redis'
import { redisPerFile } from '../support/redis-per-file'
import { observation, waitFor } from '../sync/fixture'

const shared = redisPerFile('m')
const { cleanups, newPrefix } = shared

function tempDir(tag: string): string {
  const dir = mkdtempSync(join(tmpdir(), `cairn-move-${tag}-`))
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

function client(url: string, memoryId: string, token: string, doc = createMemoryDoc()): SyncClient {
  const c = connectMemoryDoc({ serverUrl: url, memoryId, token, doc, WebSocketPolyfill: WebSocket, crossTab: false, maxBackoffMs: 100 })
  cleanups.push(() => c.destroy())
  return c
}

const slugsOf = (update: Uint8Array | null): string[] => {
  const doc = createMemoryDoc()
  if (update) Y.applyUpdate(doc, update)
  return [...readMemoryDoc(doc).observations.keys()].sort()
}

/** Every file under `dir` with its bytes' sha256 and its modification time: a change to any shows. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {}
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name)
      const st = statSync(p)
      if (st.isDirectory()) walk(p)
      else out[relative(dir, p)] = `${createHash('sha256').update(readFileSync(p)).digest('hex')} ${st.mtimeMs}`
    }
  }
  walk(dir)
  return out
}

const counts = (r: MoveReport) => Object.fromEntries((['rooms', 'tokens', 'owners', 'organizations', 'listing'] as const).map((k) => [k, [r[k].moved.length, r[k].skipped.length, r[k].conflicts.length]]))

interface WrittenDir {
  dataDir: string
  tokens: { writer: string; other: string; revoked: string; writerId: string; ownerOfHandbook: string }
  credentials: { active: string; removed: string }
  orgId: string
  /** The writing device's document: its client id is bound to the writer's connection. */
  device: Y.Doc
  notes: Record<string, string[]>
}

/** A data directory written by a file-store server through real clients: rooms, tokens (one revoked), an organization with an active and a removed member, a listed memory. */
async function writeDataDir(): Promise<WrittenDir> {
  const dataDir = tempDir('data')
  const s = await startSyncServer({ dataDir, port: 0, log: silentLog })
  try {
    const writer = s.tokens.add({ memoryId: 'mem-a', tier: 'read_write', agent: 'writer' })
    const other = s.tokens.add({ memoryId: 'mem-a', tier: 'read_write', agent: 'other' })
    const revoked = s.tokens.add({ memoryId: 'mem-b', tier: 'read_write', agent: 'leaving' })
    const owner = s.tokens.add({ memoryId: 'handbook', tier: 'full', agent: 'handbook owner' })

    const device = createMemoryDoc()
    const a = client(s.url, 'mem-a', writer.token, device)
    const b = client(s.url, 'mem-b', revoked.token)
    const h = client(s.url, 'handbook', owner.token)
    await Promise.all([a.whenSynced(), b.whenSynced(), h.whenSynced()])
    for (const slug of ['a-note-1', 'a-note-2']) putObservation(device, observation(slug))
    putObservation(b.provider.doc, observation('b-note-1'))
    putObservation(h.provider.doc, observation('handbook-note'))

    const org = s.orgs.create('Acme')
    writeVisibility(h.provider.doc, { visibility: 'organization', orgId: org.id, name: 'Handbook' })
    const active = s.orgs.addMember(org.id, { kind: 'agent', name: 'staying' })
    const removed = s.orgs.addMember(org.id, { kind: 'device', name: 'leaving' })
    s.orgs.removeMember(org.id, removed.member.id)
    await waitFor('the index to show the handbook', () => s.orgs.memories(org.id).some((m) => m.id === 'handbook'))
    s.orgs.accept(org.id, 'handbook')
    // the server holds what its clients sent once their rooms say so
    for (const [room, want] of [['mem-a', 'a-note-2'], ['mem-b', 'b-note-1'], ['handbook', 'handbook-note']] as const) {
      const deadline = Date.now() + 5_000
      while (!slugsOf(await s.roomState(room)).includes(want)) {
        if (Date.now() > deadline) throw new Error(`room ${room} never held ${want}`)
        await new Promise((r) => setTimeout(r, 20))
      }
    }
    s.tokens.revoke(revoked.connection.id)
    const notes = Object.fromEntries(await Promise.all(['mem-a', 'mem-b', 'handbook'].map(async (room) => [room, slugsOf(await s.roomState(room))])))
    for (const c of [a, b, h]) c.destroy()
    return {
      dataDir,
      tokens: { writer: writer.token, other: other.token, revoked: revoked.token, writerId: writer.connection.id, ownerOfHandbook: owner.token },
      credentials: { active: active.credential, removed: removed.credential },
      orgId: org.id,
      device,
      notes,
    }
  } finally {
    await s.close()
  }
}

async function redisServer(prefix: string): Promise<SyncServer> {
  const s = await startSyncServer({ dataDir: tempDir('srv'), port: 0, redis: { url: shared.redis.url, prefix }, log: silentLog })
  cleanups.push(() => s.close())
  return s
}

describe('move-to-redis', () => {
  it('moves rooms, tokens, owners, organizations and the listing as they are; a server on Redis honors them all; a second run moves nothing', async () => {
    const written = await writeDataDir()
    const before = snapshot(written.dataDir)
    const prefix = newPrefix()

    const first = await moveToRedis({ dataDir: written.dataDir, redis: { url: shared.redis.url, prefix } })
    expect(first.rooms.moved).toEqual(['handbook', 'mem-a', 'mem-b'])
    expect(first.tokens.moved).toHaveLength(4)
    expect(first.organizations.moved).toEqual([written.orgId])
    expect(first.listing.moved).toEqual(['handbook'])
    expect(first.owners.moved).toContain(`mem-a/${written.device.clientID}`)
    expect(first.notes).toEqual([])
    // nothing in the data directory changed
    expect(snapshot(written.dataDir)).toEqual(before)

    // a second run finds everything there as it is
    const second = await moveToRedis({ dataDir: written.dataDir, redis: { url: shared.redis.url, prefix } })
    expect(counts(second)).toEqual({
      rooms: [0, 3, 0], tokens: [0, 4, 0], owners: [0, first.owners.moved.length, 0], organizations: [0, 1, 0], listing: [0, 1, 0],
    })
    expect(second.rooms.skipped).toEqual(first.rooms.moved)

    const s = await redisServer(prefix)
    // the same notes, to the old token
    for (const room of ['mem-a', 'mem-b', 'handbook']) expect(slugsOf(await s.roomState(room))).toEqual(written.notes[room])
    const reader = client(s.url, 'mem-a', written.tokens.writer)
    await reader.whenSynced()
    expect([...readMemoryDoc(reader.provider.doc).observations.keys()].sort()).toEqual(['a-note-1', 'a-note-2'])
    // the revoked token is still refused
    expect(await denied(client(s.url, 'mem-b', written.tokens.revoked))).toBe(CLOSE.revoked)
    // the removed member is refused as removed; the active one lists the listed memory and reads it
    expect(await denied(client(s.url, 'handbook', written.credentials.removed))).toBe(CLOSE.memberRemoved)
    expect((await listing(s.url, written.credentials.removed)).status).toBe(403)
    expect(await listing(s.url, written.credentials.active)).toEqual({ status: 200, ids: ['handbook'] })
    const member = client(s.url, 'handbook', written.credentials.active)
    await member.whenSynced()
    await waitFor('the member to read the handbook', () => readMemoryDoc(member.provider.doc).observations.has('handbook-note'))

    // the device goes on writing under its own client id; another moved token may not write as it
    const device = client(s.url, 'mem-a', written.tokens.writer, written.device)
    await device.whenSynced()
    putObservation(written.device, observation('a-note-3'))
    await waitFor('the device\'s new note', () => readMemoryDoc(reader.provider.doc).observations.has('a-note-3'))
    expect(device.status.refusals).toEqual([])
    const attacker = client(s.url, 'mem-a', written.tokens.other)
    await attacker.whenSynced()
    send(attacker, asClient(attacker.provider.doc, written.device.clientID, (d) => putObservation(d, observation('forged-1'))))
    expect(await refusedAs(attacker, 1)).toBe('not_owner')
  }, 60_000)

  it('refuses a record Redis holds differently, leaves it as Redis has it, moves the rest, and the CLI exits 1 with `conflict`', async () => {
    const written = await writeDataDir()
    const before = snapshot(written.dataDir)
    // Redis already holds, under the default prefix the command line uses, another version of
    // one token, of the organization, of the device's client owner and of the listing entry
    const conn = await connectRedis(shared.redis.url)
    cleanups.push(() => conn.close())
    const tokens = (JSON.parse(readFileSync(join(written.dataDir, 'tokens.json'), 'utf8')) as { connections: ConnectionRecord[] }).connections
    const writerRecord = tokens.find((c) => c.id === written.tokens.writerId)!
    const access = await RedisAccess.open(conn, { watch: false })
    expect(await access.importConnection({ ...writerRecord, agent: 'someone else' })).toEqual({ outcome: 'moved' })
    const orgs = await RedisOrgs.open(conn, { watch: false })
    const org = (JSON.parse(readFileSync(join(written.dataDir, 'orgs.json'), 'utf8')) as { orgs: Organization[] }).orgs[0]!
    expect(await orgs.importOrganization({ ...org, name: 'Not Acme' })).toEqual({ outcome: 'moved' })
    const owners = new RedisClientOwners(conn)
    expect(await owners.importBindings('mem-a', new Map([[written.device.clientID, 'conn_elsewhere']]))).toMatchObject([{ outcome: 'moved' }])
    const index = new RedisOrgMemoryIndex(conn)
    expect(await index.importEntry('handbook', { orgId: 'org-other', name: 'Elsewhere', publishedBy: null })).toEqual({ outcome: 'moved' })

    const run = () => promisify(execFile)('node', ['--import', 'tsx', 'src/cli/main.ts', 'move-to-redis', '--data', written.dataDir, '--redis', shared.redis.url])
    const failed = await run().then(() => null, (err: { code: number; stdout: string; stderr: string }) => err)
    expect(failed?.code).toBe(1)
    expect(failed?.stderr).toMatch(/^conflict: 4 record\(s\) differ/m)
    expect(failed?.stdout).toContain(`refused ${written.tokens.writerId}: Redis holds connection ${written.tokens.writerId} with another agent`)
    expect(failed?.stdout).toContain(`refused ${org.id}: Redis holds organization ${org.id} with another name`)
    expect(failed?.stdout).toContain(`refused mem-a/${written.device.clientID}: Redis binds client ${written.device.clientID} of room mem-a to connection conn_elsewhere`)
    expect(failed?.stdout).toContain('refused handbook: Redis holds memory handbook in the listing index with another name, orgId')
    expect(failed?.stdout).toMatch(/^rooms: 3 moved \(handbook, mem-a, mem-b\)/m)
    expect(failed?.stdout).toMatch(/^tokens: 3 moved .*; 0 already in Redis; 1 refused$/m)

    // nothing refused was overwritten
    expect((await access.list('mem-a')).find((c) => c.id === written.tokens.writerId)?.agent).toBe('someone else')
    expect((await orgs.list()).map((o) => o.name)).toEqual(['Not Acme'])
    const check = new RedisClientOwners(conn)
    await check.load('mem-a')
    expect(check.ownerOf('mem-a', written.device.clientID)).toBe('conn_elsewhere')
    expect((await index.of('org-other')).map((m) => m.name)).toEqual(['Elsewhere'])
    // the rest moved: the other token works on a server on Redis, the room holds its notes
    const s = await startSyncServer({ dataDir: tempDir('srv'), port: 0, redis: shared.redis.url, log: silentLog })
    cleanups.push(() => s.close())
    const other = client(s.url, 'mem-a', written.tokens.other)
    await other.whenSynced()
    expect([...readMemoryDoc(other.provider.doc).observations.keys()].sort()).toEqual(['a-note-1', 'a-note-2'])
    // a re-run refuses the same four and moves nothing more
    const again = await run().then(() => null, (err: { code: number; stdout: string }) => err)
    expect(again?.code).toBe(1)
    expect(again?.stdout).toMatch(/^rooms: 0 moved; 3 already in Redis/m)
    expect(snapshot(written.dataDir)).toEqual(before)
  }, 60_000)

  it('refuses a missing or foreign data directory and a Redis that would not keep what it acknowledges, writing nothing', async () => {
    const prefix = newPrefix()
    const redis = { url: shared.redis.url, prefix }
    await expect(moveToRedis({ dataDir: join(tmpdir(), 'cairn-move-no-such-dir'), redis })).rejects.toMatchObject({ code: 'invalid_request', message: /no data directory/ })
    const foreign = tempDir('foreign')
    appendFileSync(join(foreign, 'notes.txt'), 'not a sync server\n')
    await expect(moveToRedis({ dataDir: foreign, redis })).rejects.toMatchObject({ code: 'invalid_request', message: /holds nothing a Cairn sync server wrote/ })

    // a room log with a torn tail: the file store's load would cut it; the move reads around it
    const dataDir = tempDir('torn')
    mkdirSync(join(dataDir, 'rooms'))
    const s = await startSyncServer({ dataDir, port: 0, log: silentLog })
    const token = s.tokens.add({ memoryId: 'mem-t', tier: 'read_write', agent: 'w' }).token
    const c = client(s.url, 'mem-t', token)
    await c.whenSynced()
    putObservation(c.provider.doc, observation('t-note-1'))
    const deadline = Date.now() + 5_000
    while (!slugsOf(await s.roomState('mem-t')).includes('t-note-1')) {
      if (Date.now() > deadline) throw new Error('the note never reached the server')
      await new Promise((r) => setTimeout(r, 20))
    }
    c.destroy()
    await s.close()
    appendFileSync(join(dataDir, 'rooms', 'mem-t.ylog'), Buffer.from([0, 0, 0, 99, 1, 2]))
    const before = snapshot(dataDir)

    const volatile = await startRedis({ durable: false })
    cleanups.push(() => volatile.stop())
    await expect(moveToRedis({ dataDir, redis: volatile.url })).rejects.toMatchObject({ code: 'storage_failed', message: /appendfsync always/ })
    const probe = await connectRedis(volatile.url, { durability: 'trust' })
    cleanups.push(() => probe.close())
    expect(await probe.command.sendCommand<number>(['DBSIZE'])).toBe(0)
    await expect(moveToRedis({ dataDir, redis: 'http://127.0.0.1:1' })).rejects.toMatchObject({ code: 'invalid_request' })
    await expect(moveToRedis({ dataDir, redis: 'redis://127.0.0.1:1' })).rejects.toMatchObject({ code: 'storage_failed', message: /could not connect to Redis/ })

    const moved = await moveToRedis({ dataDir, redis })
    expect(moved.rooms.moved).toEqual(['mem-t'])
    expect(snapshot(dataDir)).toEqual(before)
    const onRedis = await redisServer(prefix)
    expect(slugsOf(await onRedis.roomState('mem-t'))).toEqual(['t-note-1'])
  }, 60_000)
})
