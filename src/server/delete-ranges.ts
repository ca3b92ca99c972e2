// A delete set read against the room: its ranges merged as Yjs writes them, looked up by
// binary search, and walked over the room's live items only as far as a caller reads.
import * as Y from 'yjs'

/** The items not yet deleted among the room's structs in [clock, clock + len) of `client`, in order; `work.visited` counts the structs read. */
export function* liveItemsIn(room: Y.Doc, client: number, clock: number, len: number, work: { visited: number }): Generator<Y.Item> {
  const structs = room.store.clients.get(client)
  if (!structs) return
  const end = Math.min(clock + len, Y.getState(room.store, client))
  if (clock >= end) return
  // lazily: a caller that has decided stops reading the room
  for (let i = Y.findIndexSS(structs, clock); i < structs.length; i++) {
    const s = structs[i]!
    work.visited++
    if (s.id.clock >= end) break
    if (s instanceof Y.Item && !s.deleted) yield s
  }
}

export type Ranges = Map<number, Array<{ clock: number; len: number }>>

/**
 * A delete set as Yjs writes one: per client, ranges sorted by clock and neither overlapping
 * nor touching. Yjs (and the update screen) walk the room's structs once per range, so a
 * delete set that repeats [0, clock) of one client 10,000 times in 30 KB would cost 10,000
 * walks of the room; merged first, it costs the size of the delete set plus one walk of the
 * structs it covers. `redundant` says whether the ranges were not in that form already.
 */
export function mergeDeleteRanges(clients: Ranges): { clients: Ranges; redundant: boolean } {
  const merged: Ranges = new Map()
  let redundant = false
  for (const [client, ranges] of clients) {
    const sorted = [...ranges].filter((r) => r.len > 0)
    if (sorted.length !== ranges.length) redundant = true
    sorted.sort((a, b) => a.clock - b.clock)
    const out: Array<{ clock: number; len: number }> = []
    for (const r of sorted) {
      const last = out[out.length - 1]
      if (last && r.clock <= last.clock + last.len) {
        redundant = true
        last.len = Math.max(last.len, r.clock + r.len - last.clock)
      } else out.push({ clock: r.clock, len: r.len })
    }
    if (!redundant && out.some((r, i) => r.clock !== ranges[i]!.clock)) redundant = true
    if (out.length) merged.set(client, out)
  }
  return { clients: merged, redundant }
}

/** Whether `id` lies in one of `client`'s merged (sorted, disjoint) ranges: a binary search. */
export function inRanges(ranges: Ranges, id: Y.ID): boolean {
  const list = ranges.get(id.client)
  if (!list) return false
  let lo = 0
  let hi = list.length - 1
  while (lo <= hi) {
    const mid = (lo + hi) >> 1
    const r = list[mid]!
    if (id.clock < r.clock) hi = mid - 1
    else if (id.clock >= r.clock + r.len) lo = mid + 1
    else return true
  }
  return false
}
