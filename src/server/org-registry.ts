// Organizations, kept where their members meet: `<dataDir>/orgs.json` on the sync server, in
// the same way as the token file (a change re-reads it under a lock and replaces it
// atomically; a running server re-reads it when it changes). A member is an agent or a device
// with a credential: a secret shown once, of which only the sha256 is kept. A removed member
// stays in the file with `removedAt`, so its credential is refused as removed, not unknown.
import { randomBytes } from 'node:crypto'
import { mkdirSync, readFileSync } from 'node:fs'
import { dirname } from 'node:path'
import { MemoryError } from '../core/errors'
import { isLabel, ROOM_NAME } from '../core/identifiers'
import { CREDENTIAL_CHARS, LABEL_CHARS } from '../core/limits'
import type { MemberKind } from '../core/types'
import { fileStamp, withFileLock, writeJsonAtomic } from './json-file'
import { hashToken, sameHash } from './token-registry'

export const ORGS_FILE = 'orgs.json'
const CREDENTIAL_PREFIX = 'cairn_member_'

export type { MemberKind }

export interface OrgMember {
  id: string
  kind: MemberKind
  name: string
  credentialHash: string
  addedAt: string
  removedAt: string | null
  /** May publish memories it owns into the organization's listing itself (absent: no). */
  mayPublish?: boolean
}

/** A memory the organization accepted into its listing: its members may list and read it while its owner keeps it visible to them. */
export interface ListedMemory {
  memoryId: string
  acceptedAt: string
  /** The member that published it, as the memory's owner; absent when an administrator of the server accepted it. */
  acceptedBy?: string
}

export interface Organization {
  id: string
  name: string
  createdAt: string
  members: OrgMember[]
  /**
   * Memories accepted into the listing. Any memory's owner can name the organization in its
   * visibility (its id is known to every member and ex-member); members see it only once the
   * organization consented: an administrator of the server accepted it, or its owner is a
   * member with the right to publish. So no stranger's memory sits beside the real ones.
   */
  listed?: ListedMemory[]
}

/** Who a member credential belongs to (a removed member included, so callers can say why). */
export interface MemberOf {
  org: Organization
  member: OrgMember
}

export interface NewMember {
  /** Shown once; only its hash is kept. */
  credential: string
  member: OrgMember
  org: Organization
}

export interface NewMemberInput {
  kind: MemberKind
  name: string
  /** The member may publish memories it owns into the listing (see `OrgMember.mayPublish`). */
  mayPublish?: boolean
}

/** The organization operations, whichever store keeps them. */
export interface OrgAdmin {
  create(name: string): Organization
  addMember(orgId: string, input: NewMemberInput): NewMember
  removeMember(orgId: string, memberId: string): OrgMember
  list(): Organization[]
  /** Accepts a memory into the organization's listing (its owner still decides whether it is visible); `by`: the publishing member. */
  accept(orgId: string, memoryId: string, by?: string): ListedMemory
  /** Takes a memory out of the listing: members' sockets to it close. */
  unlist(orgId: string, memoryId: string): void
}

const checkName = (what: string, name: unknown): string => {
  const n = typeof name === 'string' ? name.trim() : ''
  if (!isLabel(n)) throw new MemoryError('invalid_request', `${what} must be a name of 1-${LABEL_CHARS} characters`)
  return n
}

function isMember(value: unknown): value is OrgMember {
  if (typeof value !== 'object' || value === null) return false
  const m = value as Record<string, unknown>
  return typeof m.id === 'string' && (m.kind === 'agent' || m.kind === 'device') && typeof m.name === 'string' &&
    typeof m.credentialHash === 'string' && /^[0-9a-f]{64}$/.test(m.credentialHash) && typeof m.addedAt === 'string' &&
    (m.removedAt === null || typeof m.removedAt === 'string') && (m.mayPublish === undefined || typeof m.mayPublish === 'boolean')
}

export function isOrganization(value: unknown): value is Organization {
  if (typeof value !== 'object' || value === null) return false
  const o = value as Record<string, unknown>
  return typeof o.id === 'string' && typeof o.name === 'string' && typeof o.createdAt === 'string' && Array.isArray(o.members) && o.members.every(isMember) &&
    (o.listed === undefined || (Array.isArray(o.listed) && o.listed.every((l: unknown) => typeof (l as ListedMemory)?.memoryId === 'string' && typeof (l as ListedMemory).acceptedAt === 'string' && ((l as ListedMemory).acceptedBy === undefined || typeof (l as ListedMemory).acceptedBy === 'string'))))
}

export const copyOrganization = (o: Organization): Organization => ({ ...o, members: o.members.map((m) => ({ ...m })), ...(o.listed ? { listed: o.listed.map((l) => ({ ...l })) } : {}) })
const copy = copyOrganization

// The changes every store makes to an organization, defined once: each checks its input and
// edits the organization in place; the store reads it before and saves it after.

/** A new organization with no members. */
export function newOrganization(name: string): Organization {
  return { id: `org-${randomBytes(6).toString('hex')}`, name: checkName('an organization name', name), createdAt: new Date().toISOString(), members: [] }
}

/** A new member and its credential (shown once; only its hash is kept). */
export function newMember(input: NewMemberInput): { credential: string; member: OrgMember } {
  if (input.kind !== 'agent' && input.kind !== 'device') throw new MemoryError('invalid_request', 'a member is an agent or a device')
  const name = checkName('a member name', input.name)
  const credential = CREDENTIAL_PREFIX + randomBytes(32).toString('base64url')
  const member: OrgMember = { id: `mem-${randomBytes(6).toString('hex')}`, kind: input.kind, name, credentialHash: hashToken(credential), addedAt: new Date().toISOString(), removedAt: null, ...(input.mayPublish === true ? { mayPublish: true } : {}) }
  return { credential, member }
}

/** Marks a member removed (once: a second removal changes nothing). */
export function removeMemberFrom(org: Organization, memberId: string): { member: OrgMember; changed: boolean } {
  const member = org.members.find((m) => m.id === memberId)
  if (!member) throw new MemoryError('not_found', `no member "${memberId}" in organization "${org.id}"; list them with \`org list\``, { orgId: org.id, memberId })
  if (member.removedAt !== null) return { member, changed: false }
  member.removedAt = new Date().toISOString()
  return { member, changed: true }
}

export function checkMemoryId(memoryId: unknown): string {
  if (typeof memoryId !== 'string' || !ROOM_NAME.test(memoryId)) throw new MemoryError('invalid_request', `"${String(memoryId).slice(0, 80)}" is not a memory id`)
  return memoryId
}

/** Accepts a memory into the listing, or returns the entry it already has. */
export function acceptInto(org: Organization, memoryId: string, by?: string): { entry: ListedMemory; changed: boolean } {
  const known = org.listed?.find((l) => l.memoryId === memoryId)
  if (known) return { entry: { ...known }, changed: false }
  const entry: ListedMemory = { memoryId, acceptedAt: new Date().toISOString(), ...(by === undefined ? {} : { acceptedBy: by }) }
  org.listed = [...(org.listed ?? []), entry]
  return { entry: { ...entry }, changed: true }
}

/** Takes a memory out of the listing; whether it was there. */
export function unlistFrom(org: Organization, memoryId: string): boolean {
  const before = org.listed?.length ?? 0
  org.listed = (org.listed ?? []).filter((l) => l.memoryId !== memoryId)
  return org.listed.length !== before
}

/** What a newer copy of an organization cuts: members removed since, and memories taken out of its listing. */
export function cutsBetween(before: Organization | undefined, after: Organization): { removed: OrgMember[]; unlisted: string[] } {
  if (!before) return { removed: [], unlisted: [] }
  const active = new Set(before.members.filter((m) => m.removedAt === null).map((m) => m.id))
  const listed = new Set((after.listed ?? []).map((l) => l.memoryId))
  return {
    removed: after.members.filter((m) => m.removedAt !== null && active.has(m.id)),
    unlisted: (before.listed ?? []).map((l) => l.memoryId).filter((id) => !listed.has(id)),
  }
}

/** The member a credential belongs to among `orgs`, removed or not; every member is compared, in constant time each. */
export function memberByCredential(orgs: Iterable<Organization>, credential: string): MemberOf | null {
  if (typeof credential !== 'string' || credential.length === 0 || credential.length > CREDENTIAL_CHARS) return null
  const hash = hashToken(credential)
  let found: MemberOf | null = null
  for (const org of orgs) {
    for (const member of org.members) if (sameHash(member.credentialHash, hash)) found = { org, member }
  }
  return found ? { org: copy(found.org), member: { ...found.member } } : null
}

export class OrgRegistry implements OrgAdmin {
  private orgs: Organization[] = []
  private seen = ''
  private readonly removeListeners = new Set<(org: Organization, member: OrgMember) => void>()
  private readonly unlistListeners = new Set<(orgId: string, memoryId: string) => void>()

  constructor(readonly file: string) {
    mkdirSync(dirname(file), { recursive: true })
    this.orgs = this.readFile()
  }

  private readFile(): Organization[] {
    this.seen = fileStamp(this.file)
    let text: string
    try {
      text = readFileSync(this.file, 'utf8')
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return []
      throw new MemoryError('storage_failed', `cannot read the organization registry ${this.file}: ${(err as Error).message}`)
    }
    let parsed: unknown
    try {
      parsed = JSON.parse(text)
    } catch {
      throw new MemoryError('storage_failed', `the organization registry ${this.file} is not valid JSON; restore it from a backup or move it away to start with no organizations`)
    }
    const list = (parsed as { orgs?: unknown }).orgs
    if (!Array.isArray(list)) throw new MemoryError('storage_failed', `the organization registry ${this.file} has no "orgs" list`)
    return list.filter(isOrganization)
  }

  private change<T>(edit: () => T): T {
    return withFileLock(this.file, 'the organization registry', () => {
      this.reload()
      const out = edit()
      writeJsonAtomic(this.file, { version: 1, orgs: this.orgs })
      this.seen = fileStamp(this.file)
      return out
    })
  }

  /** Re-reads the file and reports members removed and memories unlisted since it was last read (by another process). */
  reload(): void {
    const before = new Map(this.orgs.map((o) => [o.id, o]))
    this.orgs = this.readFile()
    for (const org of this.orgs) {
      const { removed, unlisted } = cutsBetween(before.get(org.id), org)
      for (const m of removed) this.emitRemoved(org, m)
      for (const memoryId of unlisted) for (const l of this.unlistListeners) l(org.id, memoryId)
    }
  }

  reloadIfChanged(): void {
    if (fileStamp(this.file) !== this.seen) this.reload()
  }

  create(name: string): Organization {
    const org = newOrganization(name)
    return this.change(() => {
      this.orgs.push(org)
      return copy(org)
    })
  }

  addMember(orgId: string, input: NewMemberInput): NewMember {
    const { credential, member } = newMember(input)
    return this.change(() => {
      const org = this.find(orgId)
      org.members.push(member)
      return { credential, member: { ...member }, org: copy(org) }
    })
  }

  /** Removes a member for good; the server closes its sockets at once (it listens through `onMemberRemoved`). */
  removeMember(orgId: string, memberId: string): OrgMember {
    const { org, member, changed } = this.change(() => {
      const org = this.find(orgId)
      return { org, ...removeMemberFrom(org, memberId) }
    })
    if (changed) this.emitRemoved(org, member)
    return { ...member }
  }

  list(): Organization[] {
    return this.orgs.map(copy)
  }

  accept(orgId: string, memoryId: string, by?: string): ListedMemory {
    checkMemoryId(memoryId)
    return this.change(() => acceptInto(this.find(orgId), memoryId, by).entry)
  }

  unlist(orgId: string, memoryId: string): void {
    const changed = this.change(() => unlistFrom(this.find(orgId), memoryId))
    if (changed) for (const l of this.unlistListeners) l(orgId, memoryId)
  }

  /** Whether the organization accepted the memory into its listing, from what this process read last. */
  accepts(orgId: string, memoryId: string): boolean {
    return this.orgs.find((o) => o.id === orgId)?.listed?.some((l) => l.memoryId === memoryId) === true
  }

  onUnlisted(listener: (orgId: string, memoryId: string) => void): () => void {
    this.unlistListeners.add(listener)
    return () => this.unlistListeners.delete(listener)
  }

  get(orgId: string): Organization | null {
    const org = this.orgs.find((o) => o.id === orgId)
    return org ? copy(org) : null
  }

  /** The member a credential belongs to, removed or not, or null; every member is compared, in constant time each. */
  verify(credential: string): MemberOf | null {
    return memberByCredential(this.orgs, credential)
  }

  /** Whether the member is still in the organization, from what this process read last. */
  isActive(orgId: string, memberId: string): boolean {
    const m = this.orgs.find((o) => o.id === orgId)?.members.find((x) => x.id === memberId)
    return m !== undefined && m.removedAt === null
  }

  onMemberRemoved(listener: (org: Organization, member: OrgMember) => void): () => void {
    this.removeListeners.add(listener)
    return () => this.removeListeners.delete(listener)
  }

  private find(orgId: string): Organization {
    const org = this.orgs.find((o) => o.id === orgId)
    if (!org) throw new MemoryError('not_found', `no organization "${orgId}"; list them with \`org list\``, { orgId })
    return org
  }

  private emitRemoved(org: Organization, member: OrgMember): void {
    for (const l of this.removeListeners) l(copy(org), { ...member })
  }
}
