// The benchmarks page generator: a small bench.json turns into the goals table and section tables
// it should, goals at sizes a run did not reach stay unjudged, and skipped sections say why.
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { goalsTable, num, renderBenchDoc, writeBenchDoc, type BenchResults } from '../../scripts/bench-doc'

const fixture = JSON.parse(readFileSync(new URL('./fixtures/bench-small.json', import.meta.url), 'utf8')) as BenchResults

describe('bench-doc', () => {
  it('judges each goal against the row of its size, and leaves the rest unjudged with the reason', () => {
    const lines = goalsTable(fixture).split('\n')
    expect(lines.slice(0, 8)).toEqual([
      '| goal | this run | verdict | alone |',
      '|---|---|---|---|',
      '| Chromium cold open (open + first recall), 10,000 observations, hybrid: < 600 ms | 512 ms | met | `npx tsx test/bench/browser-engine.ts 10000 --hybrid` |',
      '| Chromium cold open, 100,000 observations, hybrid: < 2 s | 2,500 ms | missed | `CAIRN_BENCH_PROFILE=<dir> npx tsx test/bench/browser-engine.ts 100000 --hybrid` |',
      '| Chromium hybrid recall p50 at 100,000 observations: < 15 ms | 14.2 ms | met | as the row above |',
      '| Chromium hybrid recall p50 at 100,000 within 2x the floor (one read of the stored vectors) | 1.68x a 8.5 ms floor | met | as the row above |',
      '| Writes when one entity is named in 5,000 notes: p95 < 5 ms | p95 3.25 ms (p50 1.5 ms) at 500 | not judged (this run stopped at 500; the goal is at 5,000) | `npx tsx test/bench/hub.ts 1000 5000` |',
      '| App: time to interactive, cold: < 800 ms | – | not judged (not in this run) | `npx tsx test/bench/app-alone.ts 3` |',
    ])
    // judged on the loads with the server's limits; the idle row is not a load
    expect(lines.find((l) => l.startsWith('| Sync server event-loop'))).toBe(
      '| Sync server event-loop delay p99 under each hostile load, with its limits: < 50 ms | read flood 12.5 ms | met | `npx tsx test/bench/hostile-server.ts --quick` |',
    )
    expect(lines.find((l) => l.startsWith('| Revoke'))).toBe(
      '| Revoke: from the call to the sync server closing the socket, p95 < 100 ms | – | not judged (not run: server did not start) | `npx tsx test/bench/revoke.ts 20` |',
    )
  })

  it('writes the page: where it came from, the failed sections, and each section\'s table or why it is missing', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cairn-bench-doc-'))
    const path = join(dir, 'benchmarks.md')
    writeBenchDoc(fixture, path)
    const page = readFileSync(path, 'utf8')
    expect(page).toBe(renderBenchDoc(fixture))
    expect(page).toContain('Generated from one run of `npm run bench` (full sizes) on 2026-01-02, Node v20.19.0, 2 × Test CPU, load average 0.5 / 0.4 / 0.3 at the start.')
    expect(page).toContain('Sections that failed in this run: revoke.')
    const engine = page.slice(page.indexOf('## Engine in Node'), page.indexOf('## One entity named in every note'))
    expect(engine.trim().split('\n').slice(-3)).toEqual([
      '| recall | observations | write p50 | write p95 | writes/s | recall p50 | recall p95 | derive from scratch | cold open |',
      '|---|---|---|---|---|---|---|---|---|',
      '| bm25 | 1,000 | 1.05 ms | 5.7 ms | 612 | 0.42 ms | 1.1 ms | 26.2 ms | 1,142 ms |',
    ])
    const revoke = page.slice(page.indexOf('## Revoke'), page.indexOf('## Organization access cut'))
    expect(revoke).toContain('_not run: server did not start._')
    expect(page).toContain('## The app\n\nThe production build in headless Chromium')
    expect(page.slice(page.indexOf('## The app'))).toContain('_not in this run._')
  })

  it('says when the run was quick, so its goals at larger sizes are read as unjudged', () => {
    expect(renderBenchDoc({ ...fixture, quick: true })).toContain('Generated from one run of `npm run bench -- --quick` (quick mode')
  })

  it('rounds figures to what a reader uses', () => {
    expect([num(1234.5), num(56.78), num(0.456), num(undefined), num(Number.NaN)]).toEqual(['1,235', '56.8', '0.46', '–', '–'])
  })
})
