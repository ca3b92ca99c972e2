// `npx tsx test/bench/extension-worker.ts [--extension DIR] [--notes 1000] [--starts 5]`: the MV3
// example's background service worker in Chromium. Loading the embedder there (the worker's own
// measure, from createDefaultEmbedder to ready, on each start of the worker) and hybrid recall
// at `notes` notes, timed inside the worker. Without --extension it builds the example from a
// fresh `npm pack` first.
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { chromium, type BrowserContext, type Page, type Worker } from 'playwright-core'
import { CHROMIUM_PATH } from '../e2e/harness'

const repo = join(import.meta.dirname, '../..')
const { values } = parseArgs({ options: { extension: { type: 'string' }, notes: { type: 'string' }, starts: { type: 'string' } } })
const NOTES = Number(values.notes ?? 1000)
const STARTS = Number(values.starts ?? 5)
const RECALLS = 300

interface Status {
  ready: string
  started: number
  loadedMs: { embedder: number; memory: number }
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))]!
}

function ask<T>(page: Page, message: Record<string, unknown>): Promise<T> {
  return page.evaluate((m) => (globalThis as unknown as { chrome: { runtime: { sendMessage(m: unknown): Promise<unknown> } } }).chrome.runtime.sendMessage({ to: 'cairn', ...m }), message) as Promise<T>
}

/** Writes `count` notes from inside the worker, each naming a person and a topic (with descriptions). */
function writeNotes(worker: Worker, count: number): Promise<number> {
  return worker.evaluate(async (count) => {
    const { conn } = (await (self as unknown as { cairnNotes(): Promise<{ conn: { write(input: unknown): Promise<unknown> } }> }).cairnNotes())
    const topics = ['sourdough baking', 'bird migration', 'tide pools', 'orbital mechanics', 'jazz harmony', 'soil chemistry', 'medieval maps', 'glacier retreat', 'bee colonies', 'typefaces', 'river deltas', 'chess openings']
    const verbs = ['studied', 'wrote about', 'taught', 'measured', 'argued over', 'photographed']
    const start = performance.now()
    for (let i = 0; i < count; i++) {
      const topic = topics[i % topics.length]!
      const person = `Person ${i % 240}`
      await conn.write({
        title: `${person} on ${topic} ${i}`,
        content: `${person} ${verbs[i % verbs.length]} ${topic} in week ${i % 52}, with notes on what changed since the last visit.`,
        entities: [
          { name: person, type: 'person', description: `Someone who keeps notes on ${topic}` },
          { name: `${topic} ${i % 40}`, type: 'topic', description: `A study of ${topic}, part ${i % 40}` },
        ],
      })
    }
    return performance.now() - start
  }, count)
}

/** Times `rounds` recalls inside the worker, in milliseconds each. */
function timeRecalls(worker: Worker, rounds: number): Promise<number[]> {
  return worker.evaluate(async (rounds) => {
    const { conn } = (await (self as unknown as { cairnNotes(): Promise<{ conn: { recall(q: unknown): Promise<unknown> } }> }).cairnNotes())
    const queries = ['who bakes bread', 'animals that fly south', 'planets and satellites', 'music chords', 'old charts of the world', 'ice melting', 'insects making honey', 'fonts and letters', 'where rivers meet the sea', 'board game strategy']
    const times: number[] = []
    for (let i = 0; i < rounds; i++) {
      const t = performance.now()
      await conn.recall({ query: queries[i % queries.length] })
      times.push(performance.now() - t)
    }
    return times
  }, rounds)
}

async function main(): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), 'cairn-bench-ext-'))
  let context: BrowserContext | undefined
  try {
    const extension = values.extension ?? join(root, 'extension')
    if (!values.extension) execFileSync(process.execPath, [join(repo, 'examples/mv3-extension/build.mjs'), '--out', extension], { cwd: repo, stdio: ['ignore', 'ignore', 'inherit'] })
    context = await chromium.launchPersistentContext(join(root, 'profile'), {
      executablePath: CHROMIUM_PATH,
      headless: true,
      args: [`--disable-extensions-except=${extension}`, `--load-extension=${extension}`],
    })
    const worker = context.serviceWorkers()[0] ?? (await context.waitForEvent('serviceworker'))
    const id = new URL(worker.url()).host
    // a blank extension page to send messages from (the popup would open the memory itself)
    const page = await context.newPage()
    await page.goto(`chrome-extension://${id}/manifest.json`)

    const first = await ask<Status>(page, { op: 'status' })
    const writeMs = await writeNotes(worker, NOTES)
    const recalls = (await timeRecalls(worker, RECALLS)).sort((a, b) => a - b)

    // each start of the worker loads the embedder again (from the extension's files: Cache Storage
    // takes no chrome-extension: URLs)
    const cdp = await context.newCDPSession(page)
    await cdp.send('ServiceWorker.enable')
    const loads = [first.loadedMs]
    for (let i = 1; i < STARTS; i++) {
      await cdp.send('ServiceWorker.stopAllWorkers')
      const s = await ask<Status>(page, { op: 'status' })
      if (s.started === first.started) throw new Error('the worker did not restart')
      loads.push(s.loadedMs)
    }
    // of the embedder's load, what the runtime alone costs: fetching and compiling its wasm
    const live = context.serviceWorkers().find((w) => w.url().includes(id))!
    const runtime = await live.evaluate(async () => {
      const t = performance.now()
      const bytes = await (await fetch((globalThis as unknown as { chrome: { runtime: { getURL(p: string): string } } }).chrome.runtime.getURL('ort/ort-wasm-simd-threaded.wasm'))).arrayBuffer()
      const fetched = performance.now()
      await WebAssembly.compile(bytes)
      return { fetch: Math.round(fetched - t), compile: Math.round(performance.now() - fetched) }
    })
    const embedder = loads.map((l) => l.embedder)
    const warm = embedder.slice(1).sort((a, b) => a - b)
    console.log(`MV3 background worker, ${first.ready}, Chromium ${context.browser()?.version() ?? ''}`)
    console.table([
      {
        'embedder load, first start (ms)': embedder[0],
        'embedder load, later starts p50 (ms)': warm.length ? percentile(warm, 50) : '-',
        'runtime wasm fetch + compile (ms)': `${runtime.fetch} + ${runtime.compile}`,
        'memory open after it, p50 (ms)': percentile(loads.map((l) => l.memory).sort((a, b) => a - b), 50),
        notes: NOTES,
        'write, mean (ms)': +(writeMs / NOTES).toFixed(2),
        'recall p50 (ms)': +percentile(recalls, 50).toFixed(2),
        'recall p95 (ms)': +percentile(recalls, 95).toFixed(2),
      },
    ])
    console.log(`embedder load on each start (ms): ${embedder.join(', ')}`)
  } finally {
    await context?.close()
    rmSync(root, { recursive: true, force: true })
  }
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
