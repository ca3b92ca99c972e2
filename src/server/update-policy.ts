// Decides whether an update from a connection may reach a room. The update is applied to a
// copy of the room document and the maps' own change events say which keys it would add,
// change or delete; the tier decides which of those are allowed, and every tier may write
// only valid entries into the memory's own maps.
import * as Y from 'yjs'
import { normalizeName } from '../core/normalize'
import type { Observation, Tier } from '../core/types'
import { ROOT_NAMES, ROOTS, type RootName } from '../sync/layout'
import type { RefusalCode } from '../sync/refusal'
import { checkSharedConnection, isAllowedSuccessor, sharedConnectionsMap } from '../sync/shared-connections'
import { clockTotal, sameClocks } from '../sync/yjs-internals'
import { tierAllows, type Action } from './tier-rules'
import { addName } from './merge-screen'
import { screenUpdate, type ScreenContext } from './update-screen'

export type UpdateVerdict =
  /**
   * `update` is what the room will integrate (the candidate as the copy integrated it); `claims`
   * are client ids it starts; `work` the room's structs its check visited, which the sender pays for.
   */
  | { ok: true; noop: boolean; update?: Uint8Array; claims?: number[]; work?: number }
  /** The update only makes sense after changes the room has not received (yet). */
  | { ok: false; incomplete: true }
  | { ok: false; incomplete: false; code: RefusalCode; message: string; keys: Record<string, string[]> }

/** Who sent the update; without it every client id counts as the sender's (tests of the map rules). */
export type Sender = Omit<ScreenContext, 'tier'>

const KEYS_REPORTED = 20
/** An update with no structs and no deletions: merged with another, it makes Yjs write that one's delete set sorted and merged. */
const EMPTY_UPDATE = new Uint8Array([0, 0])

/** Structs or deletions waiting for history the document lacks, as a comparable string ('' when none). */
function pendingOf(doc: Y.Doc): string {
  const { pendingStructs, pendingDs } = doc.store
  if (!pendingStructs && !pendingDs) return ''
  return JSON.stringify([[...(pendingStructs?.missing ?? [])], pendingDs ? [...pendingDs] : []])
}

type Changes = Map<RootName, Map<string, { action: Action; oldValue: unknown }>>

/**
 * A copy of a room kept in step with it, so checking an update costs the update's size, not
 * the room's: copying the room for every update would cost the whole room on every message. An
 * accepted candidate stays in the copy (the room receives it once it is on disk); a refused
 * one is refused before it reaches the copy, and only an incomplete one (waiting on history)
 * makes the copy be rebuilt at the next check.
 */
class RoomReplica {
  readonly doc: Y.Doc
  /** Collects map changes while a candidate is applied; null otherwise. */
  collecting: Changes | null = null
  /** Accepted updates not yet applied to the room: the copy is ahead of it by these. */
  inFlight = 0
  builds = 0
  /** Entity key -> names the observations give it, for judging a `read_write` merge. */
  readonly names = new Map<string, Set<string>>()
  /** Set while the room applies an update this copy integrated when judging it: following it would decode it again for nothing. */
  holdsArriving = false
  private readonly follow = (update: Uint8Array) => {
    if (!this.holdsArriving) Y.applyUpdate(this.doc, update)
  }

  constructor(private readonly room: Y.Doc, state: Uint8Array | undefined) {
    this.doc = new Y.Doc({ gc: room.gc })
    Y.applyUpdate(this.doc, state ?? Y.encodeStateAsUpdate(room))
    const observations = this.doc.getMap(ROOTS.observations)
    for (const value of observations.values()) this.learnNames(value)
    for (const name of ROOT_NAMES) {
      this.doc.getMap(name).observe((event) => {
        const seen = this.collecting?.get(name)
        for (const [key, info] of event.changes.keys) {
          seen?.set(key, { action: info.action, oldValue: info.oldValue })
          if (name === ROOTS.observations && info.action !== 'delete') this.learnNames(observations.get(key))
        }
      })
    }
    room.on('update', this.follow)
  }

  /** Names stay once seen: a name an observation gave the entity stays a fair basis for a merge. */
  private learnNames(value: unknown): void {
    const entities = (value as Partial<Observation> | undefined)?.entities
    if (!Array.isArray(entities)) return
    for (const e of entities) if (typeof e?.name === 'string') addName(this.names, normalizeName(e.name), e.name)
  }

  /** Whether the copy holds exactly the room's structs (an accepted update the room never applied would break it). */
  matchesRoom(): boolean {
    return this.inFlight > 0 || sameClocks(this.doc, this.room)
  }

  discard(): void {
    this.room.off('update', this.follow)
    this.doc.destroy()
  }
}

const replicas = new WeakMap<Y.Doc, RoomReplica>()
let replicaBuilds = 0

/** The state a room was loaded from, while the room has not changed since: a copy built from it need not encode the room. */
const loadedStates = new WeakMap<Y.Doc, Uint8Array>()

/**
 * Notes that `room` holds exactly `state` (it was just loaded from it), until its next change.
 * Encoding a big room for its first copy takes as long as applying it.
 */
export function noteLoadedState(room: Y.Doc, state: Uint8Array): void {
  loadedStates.set(room, state)
  const forget = () => {
    loadedStates.delete(room)
    room.off('update', forget)
  }
  room.on('update', forget)
}

function replicaOf(room: Y.Doc): RoomReplica {
  const known = replicas.get(room)
  if (known?.matchesRoom()) return known
  known?.discard()
  const state = loadedStates.get(room)
  loadedStates.delete(room)
  const fresh = new RoomReplica(room, state)
  replicaBuilds++
  replicas.set(room, fresh)
  return fresh
}

function discardReplica(room: Y.Doc): void {
  replicas.get(room)?.discard()
  replicas.delete(room)
}

/** How many times a room copy was built, in this process (a refused update must not cost one). */
export function replicaBuildCount(): number {
  return replicaBuilds
}

export interface InFlight {
  /**
   * Runs `apply`, which applies the accepted update to the room (and nothing else), telling
   * the copy that judged it that it holds it already. A copy rebuilt since then follows it.
   */
  arrive(apply: () => void): void
  /** The update was applied to the room, or given up. */
  done(): void
}

/**
 * Marks an accepted update as on its way to the room: until it is `done`, the copy is ahead of
 * the room on purpose.
 */
export function trackInFlight(room: Y.Doc): InFlight {
  const replica = replicas.get(room)
  if (!replica) return { arrive: (apply) => apply(), done: () => undefined }
  replica.inFlight++
  let finished = false
  return {
    arrive(apply) {
      if (replicas.get(room) !== replica) return apply()
      replica.holdsArriving = true
      try {
        apply()
      } finally {
        replica.holdsArriving = false
      }
    },
    done() {
      if (finished) return
      finished = true
      replica.inFlight--
    },
  }
}

const OWN_EVERYTHING: Sender = { connectionId: 'local', ownerOf: () => 'local', claimsLeft: Infinity }

export function checkUpdate(tier: Tier, room: Y.Doc, update: Uint8Array, sender: Sender = OWN_EVERYTHING): UpdateVerdict {
  return judge(tier, room, update, sender)
}

function judge(tier: Tier, room: Y.Doc, update: Uint8Array, sender: Sender): UpdateVerdict {
  const replica = replicaOf(room)
  const scratch = replica.doc
  // Judged against the copy: it holds the accepted updates still on their way to the room.
  const screened = screenUpdate(scratch, update, { tier, namesOf: (key) => replica.names.get(key) ?? [], ...sender })
  if (!screened.ok) return screened.incomplete ? { ok: false, incomplete: true } : { ok: false, incomplete: false, code: screened.code, message: screened.message, keys: screened.keys }
  const work = screened.work
  // Nothing new and nothing live deleted: the copy is not touched (applying would walk the
  // room's structs once more per delete range, for no change).
  if (screened.noop) return { ok: true, noop: true, work }
  // Yjs walks the room once per delete range: a delete set that repeats ranges is applied merged.
  const candidate = screened.redundantDeletes ? Y.mergeUpdates([update, EMPTY_UPDATE]) : update

  const clocksBefore = clockTotal(scratch)
  const pendingBefore = pendingOf(scratch)
  const changes: Changes = new Map(ROOT_NAMES.map((name) => [name, new Map()]))
  let integrated: Uint8Array | undefined
  const capture = (u: Uint8Array) => {
    integrated = u
  }
  replica.collecting = changes
  // What the room gets is the update as the copy integrated it: Yjs encodes that again, which
  // only changes something when the update re-sends history or deletes, or fills a gap the
  // copy's waiting structs had. Otherwise the update goes on as it came.
  if (!screened.allNew || pendingBefore !== '') scratch.on('update', capture)
  try {
    Y.applyUpdate(scratch, candidate)
  } catch {
    discardReplica(room)
    return { ok: false, incomplete: false, code: 'malformed', message: 'the update could not be decoded', keys: {} }
  } finally {
    scratch.off('update', capture)
    replica.collecting = null
  }
  const pendingAfter = pendingOf(scratch)
  if (pendingAfter !== '' && pendingAfter !== pendingBefore) {
    // the screen missed a dependency: the copy now holds waiting structs the room will not have
    discardReplica(room)
    return { ok: false, incomplete: true }
  }
  // new structs, or a key that changed: re-sent history and re-deleted items change nothing
  const changed = clockTotal(scratch) !== clocksBefore || [...changes.values()].some((m) => m.size > 0)
  if (!changed) return { ok: true, noop: true, work }

  // The screen refused what these rules refuse; a mismatch here means the copy and the
  // screen disagree, and the update is already in the copy, so the copy is rebuilt.
  const unknownRoots = [...scratch.share.keys()].filter((name) => !(ROOT_NAMES as readonly string[]).includes(name))
  const broken = tier === 'read' || unknownRoots.length > 0 || [...changes].some(([name, seen]) => [...seen.values()].some(({ action }) => !tierAllows(tier, name, action))) ||
    !connectionChangesAllowed(scratch, changes.get(ROOTS.access)!)
  if (broken) {
    discardReplica(room)
    const touched: Record<string, string[]> = {}
    for (const [name, seen] of changes) {
      if (seen.size) touched[name] = [...seen.keys()].slice(0, KEYS_REPORTED)
    }
    return { ok: false, incomplete: false, code: tier === 'read' ? 'read_only' : unknownRoots.length ? 'unknown_root' : 'not_additive', message: 'the update changes entries this connection may not change', keys: touched }
  }
  return { ok: true, noop: false, update: integrated ?? candidate, claims: screened.claims, work }
}

/** A connection keeps its agent, tier and token for good, and a revoke is never undone (not even by a full connection). */
function connectionChangesAllowed(doc: Y.Doc, seen: Map<string, { action: Action; oldValue: unknown }>): boolean {
  const map = sharedConnectionsMap(doc)
  for (const [key, { action, oldValue }] of seen) {
    if (action !== 'update') continue
    const before = checkSharedConnection(key, oldValue)
    const after = checkSharedConnection(key, map.get(key))
    if (!before.ok || !after.ok || !isAllowedSuccessor(before.value, after.value)) return false
  }
  return true
}
