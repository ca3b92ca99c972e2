// Judges the entity merges a `read_write` update writes into the alias map: each must be one
// consolidation would propose (the names alone make the two entities variants of each other),
// directly or through a chain of merges made in the room or earlier in the same update.
import type * as Y from 'yjs'
import { namesMayMerge } from '../core/consolidate'
import type { Alias } from '../core/types'
import { ROOTS } from '../sync/layout'

/** Names kept per entity key for judging merges: enough for the spellings that matter. */
export const NAMES_PER_KEY = 4
/** Entities merged into one canonical that a chained merge is compared with, so a hub costs no more than this. */
const CHAIN_SCAN = 32

export function addName(names: Map<string, Set<string>>, key: string, name: string): void {
  if (!key) return
  let set = names.get(key)
  if (!set) names.set(key, (set = new Set()))
  if (set.size < NAMES_PER_KEY) set.add(name)
}

/**
 * The variants of `merges` (variant -> canonical, as a `read_write` update sets them) that
 * no accepted proposal would write. Accepting a merge writes the proposed pair, and keeps the
 * alias map flat: a variant whose canonical was itself merged away points at that one's
 * canonical, and aliases that led to the variant are re-pointed at the same place.
 */
export function unproposedMerges(room: Y.Doc, merges: ReadonlyMap<string, string>, namesOf: (key: string) => string[]): string[] {
  if (merges.size === 0) return []
  const aliases = room.getMap(ROOTS.aliases)
  const canonicalOf = (variant: string): string | undefined => {
    const c = (aliases.get(variant) as Alias | undefined)?.canonical
    return typeof c === 'string' ? c : undefined
  }
  // canonical -> variants already merged into it in the room
  let mergedInto: Map<string, string[]> | undefined
  const roomVariantsOf = (canonical: string): string[] => {
    if (!mergedInto) {
      mergedInto = new Map()
      for (const v of aliases.keys()) {
        const c = canonicalOf(v)
        if (c !== undefined) mergedInto.set(c, [...(mergedInto.get(c) ?? []), v])
      }
    }
    return mergedInto.get(canonical) ?? []
  }
  const proposable = (a: string, b: string): boolean => {
    const as = namesOf(a)
    const bs = namesOf(b)
    return as.some((x) => bs.some((y) => namesMayMerge(x, y)))
  }
  const justified = new Set<string>()
  const justifiedInto = new Map<string, string[]>()
  const judge = (variant: string, canonical: string): boolean => {
    if (proposable(variant, canonical)) return true
    // merged with an entity that had been merged into `canonical`, in the room or earlier in this update
    const earlier = [...roomVariantsOf(canonical).slice(0, CHAIN_SCAN), ...(justifiedInto.get(canonical) ?? []).slice(0, CHAIN_SCAN)]
    if (earlier.some((k) => k !== variant && proposable(variant, k))) return true
    // re-pointed: it led to an entity that is merged into `canonical` by a justified entry
    const before = canonicalOf(variant)
    return before !== undefined && merges.get(before) === canonical && justified.has(before)
  }
  // a few passes settle the chains one offline session can make; each pass costs the update's size
  for (let pass = 0; pass < 3; pass++) {
    const size = justified.size
    for (const [variant, canonical] of merges) {
      if (justified.has(variant) || !judge(variant, canonical)) continue
      justified.add(variant)
      justifiedInto.set(canonical, [...(justifiedInto.get(canonical) ?? []), variant])
    }
    if (justified.size === size) break
  }
  return [...merges.keys()].filter((v) => !justified.has(v))
}
