// What connects a note to a recall's best hits beyond its own words: written the same day (one
// session of a conversation), near them in time, or about an entity the question names or one
// linked to it. Each gives a candidate a share of a hit's score; all are bounded by the candidates.

export const DAY_MS = 86_400_000

/** A candidate note: when it was observed (ms) and its score from its own match. */
export interface ContextCandidate {
  at: number
  score: number
}

/**
 * The indexes of the `k` best candidates by score (those with a score above 0), best first: the
 * hits whose context is worth lifting.
 */
export function anchorsOf(candidates: readonly ContextCandidate[], k: number): number[] {
  const top: number[] = []
  for (let i = 0; i < candidates.length; i++) {
    const s = candidates[i]!.score
    if (s <= 0) continue
    if (top.length === k && s <= candidates[top[k - 1]!]!.score) continue
    let at = top.length
    while (at > 0 && s > candidates[top[at - 1]!]!.score) at--
    top.splice(at, 0, i)
    if (top.length > k) top.pop()
  }
  return top
}

/**
 * Notes written the same day as one of the anchors (a session of a conversation) gain `share` of
 * the best such anchor's score; the anchor itself gains nothing from itself.
 */
export function sessionLift(candidates: readonly ContextCandidate[], anchors: readonly number[], share: number): Float64Array {
  const lift = new Float64Array(candidates.length)
  if (share <= 0 || !anchors.length) return lift
  const bestOfDay = new Map<number, number>()
  for (const i of anchors) {
    const c = candidates[i]!
    const day = Math.floor(c.at / DAY_MS)
    if (c.score > (bestOfDay.get(day) ?? 0)) bestOfDay.set(day, c.score)
  }
  const isAnchor = new Set(anchors)
  for (let i = 0; i < candidates.length; i++) {
    if (isAnchor.has(i)) continue
    const best = bestOfDay.get(Math.floor(candidates[i]!.at / DAY_MS))
    if (best !== undefined) lift[i] = share * best
  }
  return lift
}

/**
 * The reply to a hit: the note written right after an anchor on its day (the next turn of a
 * conversation, the next fact taken from it) gains `share` of the anchor's score. `written` gives
 * when each candidate was written (ms), NaN where it is not known (candidates on no anchor's day
 * need none); a note written at the same moment as the anchor is not after it. Only candidates are
 * compared.
 */
export function replyLift(candidates: readonly ContextCandidate[], written: ArrayLike<number>, anchors: readonly number[], share: number): Float64Array {
  const lift = new Float64Array(candidates.length)
  if (share <= 0) return lift
  const isAnchor = new Set(anchors)
  // the candidates whose order is known, and their days: each anchor then looks at those alone
  const known: number[] = []
  for (let i = 0; i < candidates.length; i++) if (Number.isFinite(written[i]!) && !isAnchor.has(i)) known.push(i)
  const days = known.map((i) => Math.floor(candidates[i]!.at / DAY_MS))
  for (const a of anchors) {
    const at = written[a]!
    if (!Number.isFinite(at)) continue
    const day = Math.floor(candidates[a]!.at / DAY_MS)
    let next = -1
    for (let k = 0; k < known.length; k++) {
      const i = known[k]!
      const w = written[i]!
      if (!(w > at) || days[k] !== day) continue
      if (next < 0 || w < written[next]!) next = i
    }
    if (next >= 0) lift[next] = Math.max(lift[next]!, share * candidates[a]!.score)
  }
  return lift
}

/**
 * A soft boost around the dates of the anchors, for a question that names no time of its own:
 * `share` of an anchor's score, halving every `halfLifeDays` away from it. With `relation`, only
 * notes on that side of the anchor (strictly before or after its day) gain.
 */
export function timeAnchorLift(candidates: readonly ContextCandidate[], anchors: readonly number[], share: number, halfLifeDays: number, relation?: 'before' | 'after'): Float64Array {
  const lift = new Float64Array(candidates.length)
  if (share <= 0 || !anchors.length || halfLifeDays <= 0) return lift
  const isAnchor = new Set(anchors)
  for (let i = 0; i < candidates.length; i++) {
    if (isAnchor.has(i)) continue
    const c = candidates[i]!
    let best = 0
    for (const a of anchors) {
      const anchor = candidates[a]!
      const days = (c.at - anchor.at) / DAY_MS
      if (relation === 'before' ? days > -1 : relation === 'after' ? days < 1 : false) continue
      const gain = anchor.score * Math.pow(0.5, Math.abs(days) / halfLifeDays)
      if (gain > best) best = gain
    }
    lift[i] = share * best
  }
  return lift
}

/** One edge as activation sees it: the entity at its other end and its weight. */
export interface Link {
  other: string
  weight: number
}

/**
 * Personalized PageRank from the entities a question names, a few steps deep: each step keeps
 * `1 - damping` of an entity's activation and passes the rest along its edges in proportion to
 * their weights. `linksOf` returns an entity's heaviest edges (a hub's thousands are not walked).
 * Activations sum to 1 (less what reached entities with no edges).
 */
export function spreadActivation(seeds: readonly string[], linksOf: (key: string) => readonly Link[], steps: number, damping: number): Map<string, number> {
  const out = new Map<string, number>()
  if (!seeds.length) return out
  let frontier = new Map<string, number>()
  for (const s of seeds) frontier.set(s, (frontier.get(s) ?? 0) + 1 / seeds.length)
  for (let step = 0; step <= steps && frontier.size; step++) {
    const next = new Map<string, number>()
    for (const [key, mass] of frontier) {
      const links = step < steps ? linksOf(key) : []
      let total = 0
      for (const l of links) if (l.weight > 0) total += l.weight
      // the last step, or an entity with no edges, keeps all it holds
      const kept = total > 0 ? mass * (1 - damping) : mass
      out.set(key, (out.get(key) ?? 0) + kept)
      if (total <= 0) continue
      for (const l of links) if (l.weight > 0) next.set(l.other, (next.get(l.other) ?? 0) + (mass * damping * l.weight) / total)
    }
    frontier = next
  }
  return out
}

/**
 * What an activated entity lends each note that names it: its activation spread over its notes,
 * by the square root of their number, so a hub named in thousands of notes lends each little.
 */
export function activationPerNote(activation: number, notes: number): number {
  return notes > 0 ? activation / Math.sqrt(notes) : 0
}
