// `npx tsx test/bench/batch-preview.ts`: the graph's share of a batch commit, without storage.
// On a graph of 10,000 observations, a batch of 100 (50 new notes, 50 edits) is applied either
// directly (`apply` per note: what readers would see at once) or previewed, then applied as a
// saved batch is (`previewChanges` + `applyPreviewedChanges`: readers see it only after the save).
// The graph is put back after each run, untimed; the two ways alternate. Median of 10 each.
import { Graph } from '../../src/core/graph'
import type { Observation } from '../../src/core/types'
import { observation } from './rederive'

const HELD = 10_000
const POOL = 20_000

function batch(run: number): Observation[] {
  return Array.from({ length: 100 }, (_, i) => {
    if (i < 50) return { ...observation(HELD + run * 100 + i, POOL), slug: `incoming-${run}-${i}` }
    const j = ((run * 100 + i) * 7919) % HELD
    const base = observation(j, POOL)
    const other = observation(HELD + j, POOL)
    return { ...base, title: `${base.title} (revised ${run})`, entities: other.entities, relationships: other.relationships }
  })
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!
const round = (x: number) => Math.round(x * 100) / 100

const g = Graph.derive(Array.from({ length: HELD }, (_, i) => observation(i, POOL)), new Map())
const direct: number[] = []
const preview: number[] = []
const apply: number[] = []
for (let run = 0; run < 21; run++) {
  const put = batch(run)
  const before = put.map((o) => g.getObservation(o.slug))
  if (run > 0 && run % 2 === 1) {
    const t0 = performance.now()
    for (const o of put) g.apply(o.slug, o)
    direct.push(performance.now() - t0)
  } else if (run > 0) {
    const t0 = performance.now()
    const previewed = g.previewChanges({ put })
    const t1 = performance.now()
    g.applyPreviewedChanges(previewed)
    preview.push(t1 - t0)
    apply.push(performance.now() - t1)
  }
  put.forEach((o, i) => g.apply(o.slug, before[i]))
}
console.table([{ held: HELD, batch: 100, directApplyMs: round(median(direct)), previewMs: round(median(preview)), applyPreviewedMs: round(median(apply)), previewedTotalMs: round(median(preview) + median(apply)) }])
