// Leave-one-conversation-out over grids run on several LoCoMo files with the same weightings:
// each conversation is scored at the weighting an objective picks on the other conversations.

import { readFileSync } from 'node:fs'

export interface GridByConversation {
  points: Array<Record<string, number>>
  conversations: Array<{ sampleId: string; questions: number; 'recall@10': number[] }>
}

export function readGrid(path: string): GridByConversation {
  const grid = (JSON.parse(readFileSync(path, 'utf8')) as { gridByConversation?: GridByConversation }).gridByConversation
  if (!grid) throw new Error(`${path} holds no grid: run \`npm run eval -- --locomo <path> --grid\` and copy bench/results/eval-locomo.json`)
  return grid
}

/** recall@10 of weighting `p` over `ids`, by question. */
export function recallOver(grid: GridByConversation, ids: ReadonlySet<string>, p: number): number {
  let sum = 0
  let n = 0
  for (const c of grid.conversations) {
    if (!ids.has(c.sampleId)) continue
    sum += c.questions * c['recall@10'][p]!
    n += c.questions
  }
  return n ? sum / n : 0
}

/** Each conversation at the weighting `objective` picks on the others: the held-out recall@10 of each file, and the picks. */
export function leaveOneOut(files: GridByConversation[], objective: (others: ReadonlySet<string>, p: number) => number): { held: number[]; picks: Array<{ sampleId: string; point: Record<string, number> }> } {
  const ids = files[0]!.conversations.map((c) => c.sampleId)
  const totals = files.map(() => ({ sum: 0, n: 0 }))
  const picks: Array<{ sampleId: string; point: Record<string, number> }> = []
  for (const id of ids) {
    const others = new Set(ids.filter((o) => o !== id))
    let best = 0
    let bestScore = -1
    for (let p = 0; p < files[0]!.points.length; p++) {
      const score = objective(others, p)
      // the first of equal weightings, as the grid's own leave-one-out takes it
      if (score > bestScore + 1e-9) {
        bestScore = score
        best = p
      }
    }
    picks.push({ sampleId: id, point: files[0]!.points[best]! })
    files.forEach((f, i) => {
      const c = f.conversations.find((x) => x.sampleId === id)!
      totals[i]!.sum += c.questions * c['recall@10'][best]!
      totals[i]!.n += c.questions
    })
  }
  return { held: totals.map((t) => t.sum / t.n), picks }
}
