// `npx tsx test/bench/commit-path-alone.ts [remote|alias]`: the two changes that take the batch
// commit path, at 10,000 observations: remote updates applied through the sync document, and
// accepting a merge. One JSON line on stdout (prefixed RESULT), so runs of two builds can be
// interleaved by a shell loop and compared.
import { benchAliasAccept } from './alias-accept'
import { benchYjsApply } from './yjs-apply'

async function main(): Promise<void> {
  const what = process.argv[2] ?? 'both'
  const out: Record<string, unknown> = {}
  if (what !== 'alias') out.remote = (await benchYjsApply([10_000], { batch: 100, runs: 9 })).map(({ split: _, ...r }) => r)
  if (what !== 'remote') out.alias = await benchAliasAccept([10_000])
  console.log(`RESULT ${JSON.stringify(out)}`)
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err)
    process.exit(1)
  },
)
