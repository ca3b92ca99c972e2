// Judges an update from its decoded structs alone, before anything is applied: who may author
// each new struct (Yjs client ids belong to the connection that first used them), where it
// lands (only under a key of one of the memory's root maps), what it holds (a value the
// readers accept) and what it deletes. Nothing here touches the room's kept copy, so a
// refused update costs its own size, never the room's.
import * as Y from 'yjs'
import { normalizeName } from '../core/normalize'
import type { Alias, Observation, Tier } from '../core/types'
import { ROOT_NAMES, ROOTS, type RootName } from '../sync/layout'
import type { RefusalCode } from '../sync/refusal'
import { checkSharedConnection, isAllowedSuccessor } from '../sync/shared-connections'
import { checkVisibility } from '../sync/visibility'
import { checkAlias, checkFile, checkFileBytes, checkKey, checkObservation, checkRejected, checkSetting, type Checked } from '../sync/validate'
import { inRanges, liveItemsIn, mergeDeleteRanges, type Ranges } from './delete-ranges'
import { addName, unproposedMerges } from './merge-screen'
import { tierAllows, type Action } from './tier-rules'

export type ScreenVerdict =
  /**
   * `noop`: the update holds nothing the room lacks and deletes nothing live (nothing to apply).
   * `work`: the room's structs the screen visited, so a caller can charge the sender for them.
   * `redundantDeletes`: its delete set was not sorted and merged as Yjs writes one, so it is
   * applied only in its merged form (Yjs walks the room once per range).
   * `allNew`: it deletes nothing and each client's structs start at the clock the room has
   * reached, so the room integrates it whole, as it is (nothing in it is re-sent history).
   */
  | { ok: true; claims: number[]; noop: boolean; work: number; redundantDeletes: boolean; allNew: boolean }
  /** The update builds on history the room lacks: judged (and applied) only once that arrives. */
  | { ok: false; incomplete: true }
  | { ok: false; incomplete?: false; code: RefusalCode; message: string; keys: Record<string, string[]> }

export interface ScreenContext {
  tier: Tier
  /** The connection that sent the update. */
  connectionId: string
  /** The connection a Yjs client id is bound to, if any. */
  ownerOf(client: number): string | undefined
  /** How many more client ids this connection may claim. */
  claimsLeft: number
  /** Names the room's observations give an entity key (a `read_write` merge is judged by them). */
  namesOf?(key: string): Iterable<string>
}

const CHECKS: Record<RootName, (key: string, value: unknown) => Checked<unknown>> = {
  observations: checkObservation,
  aliases: checkAlias,
  rejected: checkRejected,
  settings: checkSetting,
  files: checkFile,
  fileBytes: checkFileBytes,
  access: checkSharedConnection,
  visibility: checkVisibility,
}

const KEYS_REPORTED = 20
const isRoot = (name: string): name is RootName => (ROOT_NAMES as readonly string[]).includes(name)

type Struct = Y.Item | Y.GC | Y.Skip

/** Where an item lands: a root map and key, a nested type or a root's list part, or unknown (it waits on history). */
type Place = { root: string; key: string | null } | 'nested' | 'unknown'

function refusal(code: RefusalCode, message: string, keys: Record<string, string[]> = {}): ScreenVerdict {
  return { ok: false, code, message, keys }
}

/** The struct holding `id`, from the update (sorted per client) or from the room. */
function structAt(room: Y.Doc, byClient: Map<number, Struct[]>, id: Y.ID): Struct | null {
  if (id.clock < Y.getState(room.store, id.client)) {
    const structs = room.store.clients.get(id.client)
    return structs ? structs[Y.findIndexSS(structs, id.clock)] ?? null : null
  }
  const list = byClient.get(id.client)
  if (!list) return null
  let lo = 0
  let hi = list.length - 1
  while (lo <= hi) {
    const mid = (lo + hi) >> 1
    const s = list[mid]!
    if (id.clock < s.id.clock) hi = mid - 1
    else if (id.clock >= s.id.clock + s.length) lo = mid + 1
    else return s
  }
  return null
}

function placeOf(room: Y.Doc, byClient: Map<number, Struct[]>, item: Y.Item, seen: Map<Y.Item, Place>): Place {
  const known = seen.get(item)
  if (known) return known
  let place: Place
  const parent = item.parent as unknown
  if (typeof parent === 'string') place = { root: parent, key: item.parentSub }
  else if (parent instanceof Y.AbstractType) {
    // An item integrated into the room: its parent is a live type.
    const type = parent
    place = type._item === null ? { root: Y.findRootTypeKey(type), key: item.parentSub } : 'nested'
  } else if (parent !== null && parent !== undefined) place = 'nested'
  else {
    // Encoded with an origin, the parent and key are the neighbour's.
    const neighbourId = item.origin ?? item.rightOrigin
    const neighbour = neighbourId ? structAt(room, byClient, neighbourId) : null
    // A neighbour that was collected turns this item into a collected range too: harmless.
    place = neighbour instanceof Y.Item ? placeOf(room, byClient, neighbour, seen) : 'unknown'
  }
  seen.set(item, place)
  return place
}

/**
 * Screens `update` for `ctx` against the room as it is. Returns the client ids the update
 * would newly bind to the connection, or why it is refused. Structs that wait on history the
 * room lacks pass here; the replica check decides about them.
 */
export function screenUpdate(room: Y.Doc, update: Uint8Array, ctx: ScreenContext): ScreenVerdict {
  let decoded: { structs: Struct[]; ds: { clients: Map<number, Array<{ clock: number; len: number }>> } }
  try {
    decoded = Y.decodeUpdate(update) as unknown as typeof decoded
  } catch {
    return refusal('malformed', 'the update could not be decoded')
  }
  // A read connection's deletions are never applied, so they are not read against the room at
  // all: what it holds is judged by its structs alone.
  const deletes = ctx.tier === 'read' ? { clients: new Map() as Ranges, redundant: false } : mergeDeleteRanges(decoded.ds.clients)
  const work = { visited: 0 }
  const byClient = new Map<number, Struct[]>()
  for (const s of decoded.structs) {
    let list = byClient.get(s.id.client)
    if (!list) byClient.set(s.id.client, (list = []))
    list.push(s)
  }

  // Whether `id` is in the room or in this update: anything else is history the room lacks.
  const present = (id: Y.ID) => id.clock < Y.getState(room.store, id.client) || structAt(room, byClient, id) !== null
  for (const s of decoded.structs) {
    if (s instanceof Y.Skip && s.id.clock + s.length > Y.getState(room.store, s.id.client)) return { ok: false, incomplete: true }
    if (!(s instanceof Y.Item) || s.id.clock + s.length <= Y.getState(room.store, s.id.client)) continue
    const parent = s.parent as unknown
    if ((s.origin && !present(s.origin)) || (s.rightOrigin && !present(s.rightOrigin)) || (parent instanceof Y.ID && !present(parent))) return { ok: false, incomplete: true }
  }
  for (const [client, structs] of byClient) {
    if (structs[0]!.id.clock > Y.getState(room.store, client)) return { ok: false, incomplete: true }
  }
  for (const [client, ranges] of deletes.clients) {
    const list = byClient.get(client)
    const last = list?.[list.length - 1]
    const reach = Math.max(Y.getState(room.store, client), last ? last.id.clock + last.length : 0)
    if (ranges.some(({ clock, len }) => clock + len > reach)) return { ok: false, incomplete: true }
  }

  const claims: number[] = []
  const fresh: Struct[] = []
  let allNew = decoded.ds.clients.size === 0
  for (const [client, structs] of byClient) {
    const known = Y.getState(room.store, client)
    if (structs[0]!.id.clock !== known) allNew = false
    const last = structs[structs.length - 1]!
    if (last.id.clock + last.length <= known) continue
    // This update would make the room hold clocks of `client` it does not have yet.
    for (const s of structs) if (s.id.clock + s.length > known) fresh.push(s)
    if (ctx.tier === 'read') continue
    const owner = ctx.ownerOf(client)
    if (owner !== ctx.connectionId) {
      if (owner !== undefined || known > 0) {
        return refusal('not_owner', `the update writes history under Yjs client ${client}, which belongs to another device: a connection may only extend its own clients`, { clients: [String(client)] })
      }
      claims.push(client)
    }
  }
  if (ctx.tier === 'read') return readOnly(room, byClient, fresh)
  if (claims.length > ctx.claimsLeft) {
    return refusal('not_owner', `the update starts ${claims.length} new Yjs clients; a connection may start ${ctx.claimsLeft} more`, { clients: claims.slice(0, KEYS_REPORTED).map(String) })
  }

  const places = new Map<Y.Item, Place>()
  const invalid: Record<string, string[]> = {}
  const refused: Record<string, string[]> = {}
  const note = (into: Record<string, string[]>, map: string, key: string) => {
    const list = (into[map] ??= [])
    const shown = key.slice(0, 200)
    if (list.length < KEYS_REPORTED && !list.includes(shown)) list.push(shown)
  }
  const merges = new Map<string, string>()
  /** The observations this update writes, whose names judge its merges (read only when it merges). */
  const observedHere: Observation[] = []
  /** Root -> key -> the value this update leaves there (DELETED: none). */
  const written = new Map<RootName, Map<string, unknown>>()
  for (const s of fresh) {
    if (!(s instanceof Y.Item)) continue
    const place = placeOf(room, byClient, s, places)
    if (place === 'unknown') continue
    if (place === 'nested') {
      note(invalid, 'nested', `${s.id.client}:${s.id.clock}`)
      continue
    }
    if (!isRoot(place.root)) return refusal('unknown_root', `the update writes "${place.root.slice(0, 40)}", which is not part of a memory document`, { roots: [place.root.slice(0, 200)] })
    if (place.key === null) {
      note(invalid, place.root, '(no key)')
      continue
    }
    if (checkKey(place.key) !== null) {
      note(invalid, place.root, place.key)
      continue
    }
    const content = s.content
    // deleted in this update: by its content, or by the update's own delete set
    const gone = content instanceof Y.ContentDeleted || inRanges(deletes.clients, s.id)
    let value: unknown = INVALID
    if (!gone) {
      value = content instanceof Y.ContentBinary ? content.content : content instanceof Y.ContentAny && content.arr.length === 1 ? content.arr[0] : INVALID
      if (value === INVALID || (place.root === ROOTS.fileBytes) !== content instanceof Y.ContentBinary || !CHECKS[place.root](place.key, value).ok) {
        note(invalid, place.root, place.key)
        continue
      }
    }
    // the last of this update's items under a key is what the key holds after it
    let keys = written.get(place.root)
    if (!keys) written.set(place.root, (keys = new Map()))
    keys.set(place.key, gone ? DELETED : value)
    if (gone) continue
    if (ctx.tier === 'read_write' && place.root === ROOTS.aliases) merges.set(place.key, (value as Alias).canonical)
    if (ctx.tier === 'read_write' && place.root === ROOTS.observations) {
      observedHere.push(value as Observation)
    }
  }
  const unproposed: Record<string, string[]> = {}
  const namedHere = new Map<string, Set<string>>()
  if (merges.size) {
    for (const o of observedHere) for (const e of o.entities) addName(namedHere, normalizeName(e.name), e.name)
  }
  for (const variant of unproposedMerges(room, merges, (key) => [key, ...(namedHere.get(key) ?? []), ...(ctx.namesOf?.(key) ?? [])])) {
    note(unproposed, ROOTS.aliases, variant)
  }

  // What each written key becomes, judged by the tier rules the map rules apply after the fact.
  for (const [root, keys] of written) {
    const map = room.getMap(root)
    for (const [key, value] of keys) {
      const held = map.has(key)
      const action: Action | null = value === DELETED ? (held ? 'delete' : null) : held ? 'update' : 'add'
      if (action === null) continue
      if (!tierAllows(ctx.tier, root, action)) note(refused, root, key)
      // a connection keeps its agent, tier and token for good, and a revoke is never undone
      else if (root === ROOTS.access && action === 'update' && !successorAllowed(key, map.get(key), value)) note(refused, root, key)
    }
  }

  // Deletions of what the room holds: sync messages repeat the whole delete set, so only
  // ranges that cover a live item count. A key this update writes again was judged above.
  let deletesLive = false
  let refusedDeletions = 0
  walk: for (const [client, ranges] of deletes.clients) {
    for (const { clock, len } of ranges) {
      for (const item of liveItemsIn(room, client, clock, len, work)) {
        deletesLive = true
        const place = placeOf(room, byClient, item, places)
        if (place === 'nested' || place === 'unknown') {
          if (ctx.tier !== 'read_write') continue
          note(refused, 'nested', `${client}:${item.id.clock}`)
        } else if (isRoot(place.root) && !written.get(place.root)?.has(place.key ?? '') && !tierAllows(ctx.tier, place.root, 'delete')) {
          note(refused, place.root, place.key ?? '(no key)')
        } else continue
        // refused already, and named as far as a refusal names keys: the rest of the walk changes nothing
        if (++refusedDeletions >= KEYS_REPORTED) break walk
      }
    }
  }

  if (Object.keys(invalid).length) return refusal('invalid_value', 'the update holds values that are not valid memory entries (each root map holds checked values under bounded keys; nothing else)', invalid)
  if (Object.keys(unproposed).length) {
    return refusal('unproposed_merge', 'a read_write connection may merge two entities only when their names alone make them variants of each other, as consolidation proposes; any other merge needs a full connection', unproposed)
  }
  if (Object.keys(refused).length) {
    const what = Object.entries(refused).map(([name, keys]) => `${keys.length} existing ${name === ROOTS.observations ? 'observation' : name} entr${keys.length === 1 ? 'y' : 'ies'}`).join(', ')
    return refusal('not_additive', ctx.tier === 'read_write'
      ? `a read_write connection may only add: the update changes or deletes ${what}. Editing and deleting observations needs a full connection.`
      : `the update changes or deletes ${what} in a way no connection may (a connection or the visibility is never deleted, and a revoke is never undone)`, refused)
  }
  return { ok: true, claims, noop: fresh.length === 0 && !deletesLive, work: work.visited, redundantDeletes: deletes.redundant, allNew: allNew && fresh.length > 0 }
}

const INVALID = Symbol('invalid')
const DELETED = Symbol('deleted')

function successorAllowed(key: string, before: unknown, after: unknown): boolean {
  const b = checkSharedConnection(key, before)
  const a = checkSharedConnection(key, after)
  return b.ok && a.ok && isAllowedSuccessor(b.value, a.value)
}

/**
 * A read connection may send only what the room has; new structs are refused, naming the keys
 * they touch. Its delete set is not read: deletions from a read connection are never applied,
 * and comparing them with the room would cost a walk of its structs per range.
 */
function readOnly(room: Y.Doc, byClient: Map<number, Struct[]>, fresh: Struct[]): ScreenVerdict {
  const keys: Record<string, string[]> = {}
  const places = new Map<Y.Item, Place>()
  const note = (item: Y.Item) => {
    const place = placeOf(room, byClient, item, places)
    if (place === 'nested' || place === 'unknown' || place.key === null) return
    const list = (keys[place.root.slice(0, 40)] ??= [])
    if (list.length < KEYS_REPORTED && !list.includes(place.key)) list.push(place.key.slice(0, 200))
  }
  if (fresh.length === 0) return { ok: true, claims: [], noop: true, work: 0, redundantDeletes: false, allNew: false }
  for (const s of fresh) if (s instanceof Y.Item) note(s)
  return refusal('read_only', 'this connection is read-only: its changes are not synced. Ask for a read_write connection to add observations.', keys)
}
