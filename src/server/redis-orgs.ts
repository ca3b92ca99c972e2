// Organizations in Redis, shared by every sync server of a deployment: `<prefix>orgs` maps an
// organization id to its record (the organization, its members and listing, and a revision),
// `<prefix>org-credential` a member credential's sha256 to its organization. Every change is a
// compare-and-set of the record in one Lua call that also publishes the new record on
// `<prefix>org-changes`; each server applies it (newer revisions only) and closes the sockets of
// members removed and of memories unlisted. A server whose subscription dropped re-reads them all.
// The listing's index of memories visible to each organization is here too.
import { MemoryError } from '../core/errors'
import { CREDENTIAL_CHARS } from '../core/limits'
import type { SharedVisibility } from '../sync/visibility'
import type { SyncLog } from './log'
import type { OrgMemory } from './org-memories'
import {
  acceptInto, checkMemoryId, copyOrganization, cutsBetween, isOrganization, memberByCredential, newMember, newOrganization, removeMemberFrom, unlistFrom,
  type ListedMemory, type MemberOf, type NewMember, type NewMemberInput, type Organization, type OrgMember,
} from './org-registry'
import type { OrgMemoryIndex, OrgSource } from './org-store'
import type { RedisConnection } from './redis-connection'
import { compareHeld, conflict, MOVED, type MoveOutcome } from './redis-import'
import { hashToken } from './token-registry'

const LOOKUP_TIMEOUT_MS = 3_000
/** How long a change waits for Redis (down, or restarting) before it fails, by default. */
const CHANGE_TIMEOUT_MS = 10_000
/** Compare-and-set attempts before a change gives up (only other changes to the same organization race it). */
const CHANGE_ATTEMPTS = 50

// Replaces an organization's record if it is still the one the change was made from ('' for
// none: a new organization), indexes new members' credentials (ARGV[4] on), and tells every server.
const CHANGE = `
local cur = redis.call('HGET', KEYS[1], ARGV[1])
if (cur or '') ~= ARGV[2] then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
for i = 4, #ARGV do
  if ARGV[i] ~= '' then redis.call('HSET', KEYS[2], ARGV[i], ARGV[1]) end
end
redis.call('PUBLISH', KEYS[3], ARGV[3])
return 1
`

// Adds a room's entry to the index (ARGV: key prefix, room, organization id, entry) unless the
// index has one for the room already; then answers the organization and entry it has.
const IMPORT_ENTRY = `
local cur = redis.call('HGET', KEYS[1], ARGV[2])
if cur then return {cur, redis.call('HGET', ARGV[1] .. 'org:' .. cur .. ':memories', ARGV[2]) or ''} end
redis.call('HSET', KEYS[1], ARGV[2], ARGV[3])
redis.call('HSET', ARGV[1] .. 'org:' .. ARGV[3] .. ':memories', ARGV[2], ARGV[4])
return 1
`

// Moves a room's entry in the index to the organization its visibility names (or drops it);
// who published it is kept while the organization stays the same and no socket says otherwise.
// ARGV: key prefix, room, organization id ('' for none), name, publisher ('' unknown).
const NOTE = `
local old = redis.call('HGET', KEYS[1], ARGV[2])
local publishedBy = nil
if ARGV[5] ~= '' then publishedBy = ARGV[5]
elseif old and old == ARGV[3] then
  local prev = redis.call('HGET', ARGV[1] .. 'org:' .. old .. ':memories', ARGV[2])
  if prev then
    local p = cjson.decode(prev).publishedBy
    if type(p) == 'string' then publishedBy = p end
  end
end
if old and old ~= ARGV[3] then redis.call('HDEL', ARGV[1] .. 'org:' .. old .. ':memories', ARGV[2]) end
if ARGV[3] == '' then
  redis.call('HDEL', KEYS[1], ARGV[2])
  return 1
end
redis.call('HSET', KEYS[1], ARGV[2], ARGV[3])
redis.call('HSET', ARGV[1] .. 'org:' .. ARGV[3] .. ':memories', ARGV[2], cjson.encode({name = ARGV[4], publishedBy = publishedBy}))
return 1
`

interface OrgRecord {
  rev: number
  org: Organization
}

function parseRecord(raw: Buffer | string): OrgRecord | null {
  try {
    const r = JSON.parse(raw.toString()) as { rev?: unknown; org?: unknown }
    return typeof r.rev === 'number' && isOrganization(r.org) ? { rev: r.rev, org: r.org } : null
  } catch {
    return null
  }
}

const unavailable = (err: unknown) => new MemoryError('storage_failed', `the organizations in Redis are unavailable: ${(err as Error).message}`)

export class RedisOrgs implements OrgSource {
  /** Every organization as this server last learned it. */
  private readonly orgs = new Map<string, OrgRecord>()
  private readonly removeListeners = new Set<(org: Organization, member: OrgMember) => void>()
  private readonly unlistListeners = new Set<(orgId: string, memoryId: string) => void>()
  private readonly keys: { orgs: string; credential: string; channel: string }
  private closed = false

  private constructor(private readonly redis: RedisConnection, prefix: string, private readonly log: SyncLog, private readonly changeTimeoutMs: number) {
    this.keys = { orgs: `${prefix}orgs`, credential: `${prefix}org-credential`, channel: `${prefix}org-changes` }
  }

  /**
   * `watch`: follow every server's changes (a server); an admin command leaves it off.
   * `changeTimeoutMs`: how long a change waits for an unreachable Redis (default 10 s).
   */
  static async open(redis: RedisConnection, options: { prefix?: string; log?: SyncLog; watch?: boolean; changeTimeoutMs?: number } = {}): Promise<RedisOrgs> {
    const orgs = new RedisOrgs(redis, options.prefix ?? 'cairn:', options.log ?? (() => {}), options.changeTimeoutMs ?? CHANGE_TIMEOUT_MS)
    if (options.watch !== false) await orgs.watch()
    return orgs
  }

  private async watch(): Promise<void> {
    await this.redis.subscriber.subscribe(this.keys.channel, (message) => {
      const record = parseRecord(message)
      if (record) this.apply(record)
    })
    // Changes published while the subscriber was reconnecting are lost: re-read every record.
    this.redis.subscriber.on('ready', () => {
      if (!this.closed) this.reloadAll().catch((err: unknown) => this.log('warn', 'orgs_reload_failed', { error: (err as Error).message }))
    })
    await this.reloadAll()
  }

  private async reloadAll(): Promise<Organization[]> {
    const flat = await this.redis.command.sendCommand<Buffer[]>(['HGETALL', this.keys.orgs], { timeout: this.changeTimeoutMs })
    const out: Organization[] = []
    for (let i = 0; i + 1 < flat.length; i += 2) {
      const record = parseRecord(flat[i + 1]!)
      if (!record) {
        this.log('error', 'org_record_unreadable', { org: flat[i]!.toString() })
        continue
      }
      this.apply(record)
      out.push(record.org)
    }
    return out
  }

  /** Takes a newer record in and reports what it cuts (an older or equal revision changes nothing). */
  private apply(record: OrgRecord): void {
    const before = this.orgs.get(record.org.id)
    if (before && before.rev >= record.rev) return
    this.orgs.set(record.org.id, record)
    const { removed, unlisted } = cutsBetween(before?.org, record.org)
    for (const member of removed) for (const l of this.removeListeners) l(copyOrganization(record.org), { ...member })
    for (const memoryId of unlisted) for (const l of this.unlistListeners) l(record.org.id, memoryId)
  }

  private async read(orgId: string, timeout: number): Promise<{ raw: Buffer; record: OrgRecord } | null> {
    const raw = await this.redis.command.sendCommand<Buffer | null>(['HGET', this.keys.orgs, orgId], { timeout })
    if (!raw) return null
    const record = parseRecord(raw)
    if (!record) throw new MemoryError('storage_failed', `the record of organization "${orgId}" in Redis (${this.keys.orgs}) is not readable; restore it from a backup`, { orgId })
    return { raw, record }
  }

  /** Runs a write step, bounded: while Redis is away a change fails after a while instead of waiting for ever. */
  private async bounded<T>(step: (timeout: number) => Promise<T>, deadline: number): Promise<T> {
    try {
      return await step(Math.max(1, deadline - Date.now()))
    } catch (err) {
      throw err instanceof MemoryError ? err : unavailable(err)
    }
  }

  /** Edits one organization by compare-and-set, retrying when another change got there first. */
  private async change<T>(orgId: string, edit: (org: Organization) => { out: T; changed: boolean }, credentialHash = ''): Promise<T> {
    const deadline = Date.now() + this.changeTimeoutMs
    for (let attempt = 0; attempt < CHANGE_ATTEMPTS; attempt++) {
      const found = await this.bounded((timeout) => this.read(orgId, timeout), deadline)
      if (!found) throw new MemoryError('not_found', `no organization "${orgId}"; list them with \`org list\``, { orgId })
      const org = copyOrganization(found.record.org)
      const { out, changed } = edit(org)
      if (!changed) {
        this.apply(found.record)
        return out
      }
      const record: OrgRecord = { rev: found.record.rev + 1, org }
      const next = JSON.stringify(record)
      const done = await this.bounded((timeout) => this.redis.command.sendCommand<number>(['EVAL', CHANGE, '3', this.keys.orgs, this.keys.credential, this.keys.channel, orgId, found.raw, next, credentialHash], { timeout }), deadline)
      if (done === 1) {
        // this server cuts at once; the published copy of the same revision then changes nothing
        this.apply(record)
        return out
      }
    }
    throw new MemoryError('conflict', `organization "${orgId}" is being changed by many others at once; try again`, { orgId })
  }

  async create(name: string): Promise<Organization> {
    const org = newOrganization(name)
    const record: OrgRecord = { rev: 1, org }
    const done = await this.bounded((timeout) => this.redis.command.sendCommand<number>(['EVAL', CHANGE, '3', this.keys.orgs, this.keys.credential, this.keys.channel, org.id, '', JSON.stringify(record), ''], { timeout }), Date.now() + this.changeTimeoutMs)
    if (done !== 1) throw new MemoryError('conflict', `an organization "${org.id}" exists already; try again`)
    this.apply(record)
    return copyOrganization(org)
  }

  async addMember(orgId: string, input: NewMemberInput): Promise<NewMember> {
    const { credential, member } = newMember(input)
    return this.change(orgId, (org) => {
      org.members.push(member)
      return { out: { credential, member: { ...member }, org: copyOrganization(org) }, changed: true }
    }, member.credentialHash)
  }

  async removeMember(orgId: string, memberId: string): Promise<OrgMember> {
    return this.change(orgId, (org) => {
      const { member, changed } = removeMemberFrom(org, memberId)
      return { out: { ...member }, changed }
    })
  }

  async list(): Promise<Organization[]> {
    const orgs = await this.reloadAll()
    return orgs.map(copyOrganization).sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id))
  }

  async accept(orgId: string, memoryId: string, by?: string): Promise<ListedMemory> {
    checkMemoryId(memoryId)
    return this.change(orgId, (org) => {
      const { entry, changed } = acceptInto(org, memoryId, by)
      return { out: entry, changed }
    })
  }

  async unlist(orgId: string, memoryId: string): Promise<void> {
    await this.change(orgId, (org) => ({ out: undefined, changed: unlistFrom(org, memoryId) }))
  }

  /**
   * Moves an organization record from a data directory's orgs.json as it is (members with their
   * credential hashes, removed ones included, and the listing), through the same compare-and-set
   * as every change: stored as a new record only when Redis has none under its id, with every
   * member's credential indexed; skipped when Redis holds the same organization; a conflict
   * (nothing written) when it holds another.
   */
  async importOrganization(org: Organization): Promise<MoveOutcome> {
    const deadline = Date.now() + this.changeTimeoutMs
    for (let attempt = 0; attempt < 2; attempt++) {
      const raw = await this.bounded((timeout) => this.redis.command.sendCommand<Buffer | null>(['HGET', this.keys.orgs, org.id], { timeout }), deadline)
      if (raw) {
        const held = parseRecord(raw)
        return held ? compareHeld(`organization ${org.id}`, held.org, org) : conflict(`Redis holds an unreadable record of organization ${org.id}; left as Redis has it`)
      }
      const record: OrgRecord = { rev: 1, org }
      const done = await this.bounded((timeout) => this.redis.command.sendCommand<number>(['EVAL', CHANGE, '3', this.keys.orgs, this.keys.credential, this.keys.channel, org.id, '', JSON.stringify(record), ...org.members.map((m) => m.credentialHash)], { timeout }), deadline)
      if (done === 1) {
        this.apply(record)
        return MOVED
      }
      // made meanwhile by someone else: compare with it
    }
    throw new MemoryError('conflict', `organization "${org.id}" is being changed in Redis while it moves; try again`, { orgId: org.id })
  }

  async lookup(credential: string): Promise<MemberOf | null> {
    if (typeof credential !== 'string' || credential.length === 0 || credential.length > CREDENTIAL_CHARS) return null
    let found: { record: OrgRecord } | null
    try {
      // Looked up by the credential's sha256: finding it says nothing about any other credential.
      const orgId = await this.redis.command.sendCommand<Buffer | null>(['HGET', this.keys.credential, hashToken(credential)], { timeout: LOOKUP_TIMEOUT_MS })
      if (!orgId) return null
      // read afresh: a member removed a moment ago on another server is refused here already
      found = await this.read(orgId.toString(), LOOKUP_TIMEOUT_MS)
    } catch (err) {
      throw err instanceof MemoryError ? err : unavailable(err)
    }
    if (!found) return null
    this.apply(found.record)
    return memberByCredential([found.record.org], credential)
  }

  catchUp(): void {
    // nothing to do: the channel brings every change, and a reconnect re-reads them all
  }

  isActive(orgId: string, memberId: string): boolean {
    const m = this.orgs.get(orgId)?.org.members.find((x) => x.id === memberId)
    return m !== undefined && m.removedAt === null
  }

  accepts(orgId: string, memoryId: string): boolean {
    return this.orgs.get(orgId)?.org.listed?.some((l) => l.memoryId === memoryId) === true
  }

  onMemberRemoved(listener: (org: Organization, member: OrgMember) => void): () => void {
    this.removeListeners.add(listener)
    return () => this.removeListeners.delete(listener)
  }

  onUnlisted(listener: (orgId: string, memoryId: string) => void): () => void {
    this.unlistListeners.add(listener)
    return () => this.unlistListeners.delete(listener)
  }

  async close(): Promise<void> {
    this.closed = true
    this.removeListeners.clear()
    this.unlistListeners.clear()
    if (this.redis.subscriber.isOpen) await this.redis.subscriber.unsubscribe(this.keys.channel).catch(() => {})
  }
}

/**
 * The index of memories visible to each organization, in Redis: `<prefix>org-memory-of` maps a
 * room to the organization its visibility names, `<prefix>org:<org id>:memories` a room to its
 * name and publisher. Every server that holds a room notes it; the Lua call makes the notes of
 * several servers agree whatever their order.
 */
export class RedisOrgMemoryIndex implements OrgMemoryIndex {
  private readonly prefix: string
  private readonly log: SyncLog

  constructor(private readonly redis: RedisConnection, options: { prefix?: string; log?: SyncLog } = {}) {
    this.prefix = options.prefix ?? 'cairn:'
    this.log = options.log ?? (() => {})
  }

  note(room: string, v: SharedVisibility | null, by?: string): void {
    const orgId = v?.visibility === 'organization' && v.orgId ? v.orgId : ''
    this.redis.command.sendCommand(['EVAL', NOTE, '1', `${this.prefix}org-memory-of`, this.prefix, room, orgId, orgId ? v!.name : '', by ?? '']).catch((err: unknown) => {
      // the live answer stays right (a listing checks a loaded room's own document); the next change or load writes it again
      this.log('error', 'org_index_write_failed', { room, error: (err as Error).message })
    })
  }

  /**
   * Moves a room's entry from a data directory's org-memories.json: added when the index has
   * none for the room, skipped when it has the same, a conflict (left as it is) otherwise.
   */
  async importEntry(room: string, entry: { orgId: string; name: string; publishedBy: string | null }): Promise<MoveOutcome> {
    // written as the index's own notes write it: no publisher, no field
    const stored = JSON.stringify(entry.publishedBy === null ? { name: entry.name } : { name: entry.name, publishedBy: entry.publishedBy })
    const reply = await this.redis.command.sendCommand<number | [Buffer, Buffer]>(['EVAL', IMPORT_ENTRY, '1', `${this.prefix}org-memory-of`, this.prefix, room, entry.orgId, stored])
    if (reply === 1) return MOVED
    const [orgId, raw] = reply as [Buffer, Buffer]
    let held: { name?: unknown; publishedBy?: unknown } = {}
    try {
      held = JSON.parse(raw.toString()) as typeof held
    } catch {
      // an unreadable entry compares as empty: a conflict below
    }
    return compareHeld(`memory ${room} in the listing index`, { orgId: orgId.toString(), name: held.name, publishedBy: typeof held.publishedBy === 'string' ? held.publishedBy : null }, entry)
  }

  async shows(room: string, orgId: string): Promise<boolean> {
    const of = await this.redis.command.sendCommand<Buffer | null>(['HGET', `${this.prefix}org-memory-of`, room], { timeout: LOOKUP_TIMEOUT_MS })
    return of?.toString() === orgId
  }

  async of(orgId: string): Promise<OrgMemory[]> {
    const flat = await this.redis.command.sendCommand<Buffer[]>(['HGETALL', `${this.prefix}org:${orgId}:memories`], { timeout: LOOKUP_TIMEOUT_MS })
    const out: OrgMemory[] = []
    for (let i = 0; i + 1 < flat.length; i += 2) {
      try {
        const v = JSON.parse(flat[i + 1]!.toString()) as { name?: unknown; publishedBy?: unknown }
        if (typeof v.name === 'string') out.push({ id: flat[i]!.toString(), name: v.name, publishedBy: typeof v.publishedBy === 'string' ? v.publishedBy : null })
      } catch {
        this.log('warn', 'org_index_entry_unreadable', { org: orgId, room: flat[i]!.toString() })
      }
    }
    return out.sort((a, b) => a.name.localeCompare(b.name) || a.id.localeCompare(b.id))
  }
}
