// `npx tsx scripts/eval-grid-loo.ts <facts.json> <turns.json>`: weights chosen on both LoCoMo dev
// files at once, held out. Each file is the results of `npm run eval -- --locomo <path> --grid`
// (bench/results/eval-locomo.json, copied aside after each run), both with the same grid. Each
// conversation is scored at the weighting that does best on the other conversations of both files
// (the mean of the two files' recall@10), so one rule serves the facts and the turns.

import { leaveOneOut, readGrid, recallOver } from './eval/grid-loo'

function main(): void {
  const [factsPath, turnsPath] = process.argv.slice(2)
  if (!factsPath || !turnsPath) throw new Error('usage: npx tsx scripts/eval-grid-loo.ts <facts-grid.json> <turns-grid.json>')
  const facts = readGrid(factsPath)
  const turns = readGrid(turnsPath)
  if (JSON.stringify(facts.points) !== JSON.stringify(turns.points)) throw new Error('the two files were run with different grids')
  const ids = facts.conversations.map((c) => c.sampleId).sort()
  if (JSON.stringify(ids) !== JSON.stringify(turns.conversations.map((c) => c.sampleId).sort())) throw new Error('the two files hold different conversations')
  const round = (x: number) => Math.round(x * 1000) / 1000
  const objectives: Array<[string, (others: ReadonlySet<string>, p: number) => number]> = [
    ['both files', (others, p) => (recallOver(facts, others, p) + recallOver(turns, others, p)) / 2],
    ['facts alone', (others, p) => recallOver(facts, others, p)],
    ['turns alone', (others, p) => recallOver(turns, others, p)],
  ]
  const rows = objectives.map(([name, objective]) => {
    const { held, picks } = leaveOneOut([facts, turns], objective)
    console.log(`\nChosen on ${name}:`)
    for (const pick of picks) console.log(`  ${pick.sampleId}: ${JSON.stringify(pick.point)}`)
    return { 'chosen on': name, 'facts recall@10 held out': round(held[0]!), 'turns recall@10 held out': round(held[1]!) }
  })
  console.log('\nLeave one conversation out, each file scored at the weightings chosen as above:')
  console.table(rows)
}

main()
