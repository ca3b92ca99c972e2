// Moves what a single sync server keeps in its data directory into the Redis several servers
// share: every room's history, the connection tokens, the client-id owners, the organizations
// and their listing index. Each record goes in as it is (the same ids and hashes), so devices,
// agents and members keep their tokens and credentials. Nothing in the data directory is
// changed. A re-run is safe: rooms merge (Yjs updates are idempotent), a record Redis already
// holds as it is counts as skipped, and one Redis holds differently is a conflict, reported
// and left as Redis has it, while everything else still moves.
import { existsSync, readdirSync, statSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import * as Y from 'yjs'
import { MemoryError } from '../core/errors'
import { OWNERS_DIR, parseOwners } from './client-owners'
import { ROOM_NAME, ROOMS_DIR } from './file-room-store'
import type { SyncLog } from './log'
import { ORG_MEMORIES_FILE, OrgMemories } from './org-memories'
import { ORGS_FILE, OrgRegistry } from './org-registry'
import { RedisAccess } from './redis-access'
import type { RedisOptions } from './redis-backend'
import { connectRedis } from './redis-connection'
import type { MoveOutcome } from './redis-import'
import { RedisOrgMemoryIndex, RedisOrgs } from './redis-orgs'
import { RedisClientOwners } from './redis-owners'
import { RedisRoomStore } from './redis-room-store'
import { decodeRecords } from './room-log'
import { TOKENS_FILE, TokenRegistry } from './token-registry'

export interface MoveToRedisOptions {
  /** The single server's data directory (read, never changed). */
  dataDir: string
  /** The Redis the servers will share: a URL, or options (a key prefix, `durability`). */
  redis: string | RedisOptions
  log?: SyncLog
}

/** What became of one kind of record: ids moved, ids Redis held as they are, ids refused. */
export interface MovedKind {
  moved: string[]
  skipped: string[]
  conflicts: Array<{ id: string; reason: string }>
}

export interface MoveReport {
  /** Room (memory) ids; a room never conflicts: its history merges with what Redis holds. */
  rooms: MovedKind
  tokens: MovedKind
  /** `<room>/<client id>` */
  owners: MovedKind
  organizations: MovedKind
  /** The listing index's rooms. */
  listing: MovedKind
  /** What the mover could not read or move, that is not a conflict (a damaged stretch of a room's log). */
  notes: string[]
}

/** What the data directory holds, read before anything is written. */
interface DataDirContents {
  rooms: string[]
  tokens: ReturnType<TokenRegistry['list']>
  orgs: ReturnType<OrgRegistry['list']>
  listing: ReturnType<OrgMemories['entries']>
  owners: string[]
}

const kind = (): MovedKind => ({ moved: [], skipped: [], conflicts: [] })

function tally(into: MovedKind, id: string, outcome: MoveOutcome): void {
  if (outcome.outcome === 'moved') into.moved.push(id)
  else if (outcome.outcome === 'skipped') into.skipped.push(id)
  else into.conflicts.push({ id, reason: outcome.reason })
}

/** The names in `dir` ending in `suffix` whose stem is a room name, sorted; none when `dir` is missing. */
function roomFiles(dir: string, suffix: string): string[] {
  if (!existsSync(dir)) return []
  return readdirSync(dir)
    .filter((f) => f.endsWith(suffix) && ROOM_NAME.test(f.slice(0, -suffix.length)))
    .map((f) => f.slice(0, -suffix.length))
    .sort()
}

/** Reads the data directory, or refuses one that is missing or holds nothing a Cairn server wrote. */
function readDataDir(dataDir: string, notes: string[]): DataDirContents {
  let isDir = false
  try {
    isDir = statSync(dataDir).isDirectory()
  } catch {
    // missing: refused below
  }
  if (!isDir) throw new MemoryError('invalid_request', `there is no data directory at ${dataDir}; pass the --data the single server ran with`, { dataDir })
  const has = (file: string) => existsSync(join(dataDir, file))
  const contents: DataDirContents = {
    rooms: roomFiles(join(dataDir, ROOMS_DIR), '.ylog'),
    owners: roomFiles(join(dataDir, OWNERS_DIR), '.owners'),
    // The registries only read here: their constructors write nothing into an existing folder.
    tokens: has(TOKENS_FILE) ? new TokenRegistry(join(dataDir, TOKENS_FILE)).list() : [],
    orgs: has(ORGS_FILE) ? new OrgRegistry(join(dataDir, ORGS_FILE)).list() : [],
    listing: has(ORG_MEMORIES_FILE)
      ? new OrgMemories(dataDir, (_level, event, fields) => notes.push(`${ORG_MEMORIES_FILE} is unreadable (${String(fields?.error ?? event)}); the listing index is rebuilt as servers load the rooms`)).entries()
      : [],
  }
  if (!contents.rooms.length && !contents.owners.length && ![TOKENS_FILE, ORGS_FILE, ORG_MEMORIES_FILE].some(has)) {
    throw new MemoryError('invalid_request', `${dataDir} holds nothing a Cairn sync server wrote (no ${ROOMS_DIR}/*.ylog, ${TOKENS_FILE}, ${ORGS_FILE}, ${ORG_MEMORIES_FILE} or ${OWNERS_DIR}/); pass the --data the single server ran with`, { dataDir })
  }
  return contents
}

/** A room's history as one update, read without repairing anything (the file store's load would cut a torn tail). */
async function readRoom(dataDir: string, room: string, notes: string[]): Promise<Uint8Array | null> {
  const { records, skipped, missing } = decodeRecords(await readFile(join(dataDir, ROOMS_DIR, `${room}.ylog`)))
  if (skipped.length) {
    notes.push(`room ${room}: ${skipped.length} damaged stretch(es) of its log were not moved (history of ${missing.length} client(s) is missing); the devices that wrote them send them again when they reconnect`)
  }
  if (records.length === 0) return null
  return records.length === 1 ? records[0]! : Y.mergeUpdates(records)
}

/** Whether a room holding `held` already holds everything in `update`: applying it changes nothing and leaves nothing waiting. */
function holdsAll(held: Uint8Array | null, update: Uint8Array): boolean {
  const doc = new Y.Doc()
  try {
    if (held) Y.applyUpdate(doc, held)
    let changed = false
    doc.on('update', () => {
      changed = true
    })
    Y.applyUpdate(doc, update)
    // structs waiting for history (a damaged log's room) count as not held: appending again is harmless
    return !changed && doc.store.pendingStructs === null && doc.store.pendingDs === null
  } finally {
    doc.destroy()
  }
}

/**
 * Moves the data directory into Redis. Refuses (`invalid_request`) a missing data directory or
 * one holding nothing Cairn wrote, and (`storage_failed`) a Redis it cannot reach or that would
 * not keep what it acknowledges (the servers' own check, unless `durability: 'trust'`), before
 * writing anything. Resolves with what moved; conflicts are in the report, not thrown.
 */
export async function moveToRedis(options: MoveToRedisOptions): Promise<MoveReport> {
  const report: MoveReport = { rooms: kind(), tokens: kind(), owners: kind(), organizations: kind(), listing: kind(), notes: [] }
  const contents = readDataDir(options.dataDir, report.notes)
  const redisOptions: RedisOptions = typeof options.redis === 'string' ? { url: options.redis } : options.redis
  const log = options.log ?? (() => {})
  const redis = await connectRedis(redisOptions.url, { log, durability: redisOptions.durability })
  const prefix = redisOptions.prefix
  const store = new RedisRoomStore(redis, { ...redisOptions, log })
  try {
    const access = await RedisAccess.open(redis, { prefix, log, watch: false })
    for (const c of contents.tokens) tally(report.tokens, c.id, await access.importConnection(c))

    const orgs = await RedisOrgs.open(redis, { prefix, log, watch: false })
    for (const org of contents.orgs) tally(report.organizations, org.id, await orgs.importOrganization(org))
    const index = new RedisOrgMemoryIndex(redis, { prefix, log })
    for (const { room, ...entry } of contents.listing) tally(report.listing, room, await index.importEntry(room, entry))

    // Owners before their rooms: no update of a room reaches Redis before its clients' owners do.
    const owners = new RedisClientOwners(redis, { prefix })
    for (const room of contents.owners) {
      const text = await readFile(join(options.dataDir, OWNERS_DIR, `${room}.owners`), 'utf8')
      for (const { client, ...outcome } of await owners.importBindings(room, parseOwners(text))) tally(report.owners, `${room}/${client}`, outcome)
    }

    // One room at a time: only one room's history is in memory at once.
    for (const room of contents.rooms) {
      const update = await readRoom(options.dataDir, room, report.notes)
      if (!update) {
        report.notes.push(`room ${room}: its log holds no readable update; nothing to move`)
        continue
      }
      if (holdsAll(await store.load(room), update)) {
        report.rooms.skipped.push(room)
        continue
      }
      // resolves once Redis acknowledged it, which the durability check makes an fsync
      await store.persist(room, update)
      report.rooms.moved.push(room)
    }
  } finally {
    await store.close()
    await redis.close()
  }
  return report
}

/** How many records conflicted, across every kind. */
export function conflictsIn(report: MoveReport): number {
  return [report.rooms, report.tokens, report.owners, report.organizations, report.listing].reduce((n, k) => n + k.conflicts.length, 0)
}

/** The report as lines a person reads: per kind, counts and ids moved, skipped and refused. */
export function describeMove(report: MoveReport): string[] {
  const kinds: Array<[string, MovedKind]> = [
    ['rooms', report.rooms], ['tokens', report.tokens], ['client owners', report.owners], ['organizations', report.organizations], ['listing index', report.listing],
  ]
  const ids = (list: string[]) => (list.length ? ` (${list.join(', ')})` : '')
  const lines: string[] = []
  for (const [name, k] of kinds) {
    lines.push(`${name}: ${k.moved.length} moved${ids(k.moved)}; ${k.skipped.length} already in Redis${ids(k.skipped)}; ${k.conflicts.length} refused`)
    for (const c of k.conflicts) lines.push(`  refused ${c.id}: ${c.reason}`)
  }
  for (const note of report.notes) lines.push(`note: ${note}`)
  return lines
}
