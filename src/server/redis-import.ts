// What moving one record of a data directory into Redis came to (`move-to-redis.ts`): stored,
// already there as it is, or refused because Redis holds something else under its id.
import { isDeepStrictEqual } from 'node:util'

export type MoveOutcome = { outcome: 'moved' } | { outcome: 'skipped' } | { outcome: 'conflict'; reason: string }

export const MOVED: MoveOutcome = { outcome: 'moved' }
export const SKIPPED: MoveOutcome = { outcome: 'skipped' }
export const conflict = (reason: string): MoveOutcome => ({ outcome: 'conflict', reason })

/**
 * Compares the record Redis holds with the one being moved: the same outcome when they are
 * equal as JSON values (key order aside), else a conflict naming the fields that differ.
 */
export function compareHeld(what: string, held: object, moving: object): MoveOutcome {
  const a = JSON.parse(JSON.stringify(held)) as Record<string, unknown>
  const b = JSON.parse(JSON.stringify(moving)) as Record<string, unknown>
  const differ = [...new Set([...Object.keys(a), ...Object.keys(b)])].filter((k) => !isDeepStrictEqual(a[k], b[k])).sort()
  return differ.length === 0 ? SKIPPED : conflict(`Redis holds ${what} with another ${differ.join(', ')}; left as Redis has it`)
}
