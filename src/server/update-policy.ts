// Decides whether an update from a connection may reach a room. The update is applied to a
// copy of the room document and the maps' own change events say which keys it would add,
// change or delete; the tier decides which of those are allowed, and every tier may write
// only valid entries into the memory's own maps.
import * as Y from 'yjs'
import type { Tier } from '../core/types'
import { ROOT_NAMES, ROOTS, type RootName } from '../sync/layout'
import type { RefusalCode } from '../sync/refusal'
import { checkAlias, checkFile, checkFileBytes, checkObservation, checkRejected, type Checked } from '../sync/validate'

export type UpdateVerdict =
  | { ok: true; noop: boolean }
  /** The update only makes sense after changes the room has not received (yet). */
  | { ok: false; incomplete: true }
  | { ok: false; incomplete: false; code: RefusalCode; message: string; keys: Record<string, string[]> }

type Action = 'add' | 'update' | 'delete'

/** What a `read_write` connection may do to each map: additions everywhere, nothing else on observations and files. */
const ADDITIVE_RULES: Record<RootName, ReadonlySet<Action>> = {
  observations: new Set(['add']),
  files: new Set(['add']),
  fileBytes: new Set(['add']),
  // Accepting a merge re-points aliases that led to the merged entity, so updates pass.
  aliases: new Set(['add', 'update']),
  rejected: new Set(['add', 'update']),
}

const ALL: ReadonlySet<Action> = new Set(['add', 'update', 'delete'])
/** A `full` connection may change and delete anything, but still only with valid entries in known maps. */
const FULL_RULES: Record<RootName, ReadonlySet<Action>> = { observations: ALL, files: ALL, fileBytes: ALL, aliases: ALL, rejected: ALL }

const CHECKS: Record<RootName, (key: string, value: unknown) => Checked<unknown>> = {
  observations: checkObservation,
  aliases: checkAlias,
  rejected: checkRejected,
  files: checkFile,
  fileBytes: checkFileBytes,
}

const KEYS_REPORTED = 20

function sameValue(a: unknown, b: unknown): boolean {
  if (a instanceof Uint8Array && b instanceof Uint8Array) return sameBytes(a, b)
  try {
    return JSON.stringify(a) === JSON.stringify(b)
  } catch {
    return false
  }
}

/** Structs or deletions waiting for history the document lacks, as a comparable string ('' when none). */
function pendingOf(doc: Y.Doc): string {
  const { pendingStructs, pendingDs } = doc.store
  if (!pendingStructs && !pendingDs) return ''
  return JSON.stringify([[...(pendingStructs?.missing ?? [])], pendingDs ? [...pendingDs] : []])
}

type Changes = Map<RootName, Map<string, { action: Action; oldValue: unknown }>>

/**
 * A copy of a room kept in step with it, so checking an update costs the update's size, not
 * the room's: copying a 10,000-observation room for every update took half a second. The
 * candidate is applied to the copy; if it is refused or incomplete, the copy no longer
 * matches the room and is rebuilt at the next check.
 */
class RoomReplica {
  readonly doc: Y.Doc
  /** Collects map changes while a candidate is applied; null otherwise. */
  collecting: Changes | null = null
  private readonly follow = (update: Uint8Array) => Y.applyUpdate(this.doc, update)

  constructor(private readonly room: Y.Doc) {
    this.doc = new Y.Doc({ gc: room.gc })
    Y.applyUpdate(this.doc, Y.encodeStateAsUpdate(room))
    for (const name of ROOT_NAMES) {
      this.doc.getMap(name).observe((event) => {
        const seen = this.collecting?.get(name)
        if (seen) for (const [key, info] of event.changes.keys) seen.set(key, { action: info.action, oldValue: info.oldValue })
      })
    }
    room.on('update', this.follow)
  }

  /** Whether the copy holds exactly the room's structs (an accepted update the room never applied would break it). */
  matchesRoom(): boolean {
    return sameBytes(Y.encodeStateVector(this.doc), Y.encodeStateVector(this.room))
  }

  discard(): void {
    this.room.off('update', this.follow)
    this.doc.destroy()
  }
}

const replicas = new WeakMap<Y.Doc, RoomReplica>()

function replicaOf(room: Y.Doc): RoomReplica {
  const known = replicas.get(room)
  if (known?.matchesRoom()) return known
  known?.discard()
  const fresh = new RoomReplica(room)
  replicas.set(room, fresh)
  return fresh
}

function discardReplica(room: Y.Doc): void {
  replicas.get(room)?.discard()
  replicas.delete(room)
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.byteLength === b.byteLength && a.every((x, i) => x === b[i])
}

export function checkUpdate(tier: Tier, room: Y.Doc, update: Uint8Array): UpdateVerdict {
  const verdict = judge(tier, room, update)
  // whatever the room will not apply must not stay in its copy
  if (!verdict.ok) discardReplica(room)
  return verdict
}

function judge(tier: Tier, room: Y.Doc, update: Uint8Array): UpdateVerdict {
  const replica = replicaOf(room)
  const scratch = replica.doc
  const vectorBefore = Y.encodeStateVector(scratch)
  const pendingBefore = pendingOf(scratch)
  const changes: Changes = new Map(ROOT_NAMES.map((name) => [name, new Map()]))
  replica.collecting = changes
  try {
    Y.applyUpdate(scratch, update)
  } catch {
    return { ok: false, incomplete: false, code: 'malformed', message: 'the update could not be decoded', keys: {} }
  } finally {
    replica.collecting = null
  }
  const pendingAfter = pendingOf(scratch)
  if (pendingAfter !== '' && pendingAfter !== pendingBefore) return { ok: false, incomplete: true }
  // new structs, or a key that changed: re-sent history and re-deleted items change nothing
  const changed = !sameBytes(vectorBefore, Y.encodeStateVector(scratch)) || [...changes.values()].some((m) => m.size > 0)
  if (!changed) return { ok: true, noop: true }

  const touched: Record<string, string[]> = {}
  for (const [name, seen] of changes) {
    if (seen.size) touched[name] = [...seen.keys()].slice(0, KEYS_REPORTED)
  }

  if (tier === 'read') {
    return { ok: false, incomplete: false, code: 'read_only', message: 'this connection is read-only: its changes are not synced. Ask for a read_write connection to add observations.', keys: touched }
  }

  const unknownRoots = [...scratch.share.keys()].filter((name) => !(ROOT_NAMES as readonly string[]).includes(name))
  if (unknownRoots.length) {
    return { ok: false, incomplete: false, code: 'unknown_root', message: `the update writes ${unknownRoots.map((n) => `"${n.slice(0, 40)}"`).join(', ')}, which is not part of a memory document`, keys: { roots: unknownRoots.slice(0, KEYS_REPORTED) } }
  }

  const refused: Record<string, string[]> = {}
  const invalid: Record<string, string[]> = {}
  for (const [name, seen] of changes) {
    const map = scratch.getMap(name)
    for (const [key, { action, oldValue }] of seen) {
      // Re-setting an entry to the value it already has changes nothing a reader can see.
      if (action === 'update' && sameValue(oldValue, map.get(key))) continue
      if (!(tier === 'full' ? FULL_RULES : ADDITIVE_RULES)[name].has(action)) {
        ;(refused[name] ??= []).push(key)
        continue
      }
      if (action !== 'delete' && !CHECKS[name](key, map.get(key)).ok) (invalid[name] ??= []).push(key)
    }
  }
  const cap = (r: Record<string, string[]>) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, v.slice(0, KEYS_REPORTED)]))
  if (Object.keys(refused).length) {
    const what = Object.entries(refused).map(([name, keys]) => `${keys.length} existing ${name === ROOTS.observations ? 'observation' : name} entr${keys.length === 1 ? 'y' : 'ies'}`).join(', ')
    return { ok: false, incomplete: false, code: 'not_additive', message: `a read_write connection may only add: the update changes or deletes ${what}. Editing and deleting observations needs a full connection.`, keys: cap(refused) }
  }
  if (Object.keys(invalid).length) {
    return { ok: false, incomplete: false, code: 'invalid_value', message: 'the update holds values that are not valid memory entries', keys: cap(invalid) }
  }
  return { ok: true, noop: false }
}
