// A second device joins a large memory from empty in headless Chromium: the built app, its engine
// in its module worker on real IndexedDB, joining through a pairing link as a person would (the
// room and the server are first-sync-join.ts's: a sync server in a process of its own on
// 127.0.0.1, the room written into its data directory, a first device keeping it loaded). Timed
// from the click on "Join and sync": until the recall screen first shows an entity (and whether
// the app still said it was receiving the memory), until "Synced", until the app's own progress
// line went (every piece applied) and until every note was in IndexedDB. Meanwhile: the longest
// the engine worker's thread was held (a 10 ms timer inside it: how late it fired), the page's
// long tasks, and the server's loop delay and RSS growth.
// `npx tsx test/bench/first-sync-join-browser.ts [notes=10000]`; writes
// bench/results/first-sync-join-browser.json. CAIRN_JOIN_CPU_PROF=<file.cpuprofile> also writes a
// CPU profile of the engine worker over the join (DevTools opens it), to see what holds it.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { loadavg, tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { chromium, type BrowserContext, type Page, type Worker } from 'playwright-core'
import { encodeJoinCode } from '../../src/core/join-code'
import { SNIPPET_LENGTH } from '../../src/core/limits'
import { BM25_ONLY } from '../../src/core/types'
import { buildPage, CHROMIUM_ARGS, CHROMIUM_PATH, serve } from './browser-engine'
import { withHeldRoom, type HeldRoom } from './first-sync-join'

const MiB = 1024 * 1024
const round = (x: number, d = 1) => Math.round(x * 10 ** d) / 10 ** d
const QUERY = 'harbour crew winter schedule'
/** A join that has not finished by then has failed (a 100k join takes minutes on a shared machine). */
const JOIN_TIMEOUT_MS = 30 * 60_000
/** A hold of the engine worker longer than this is listed with when it began. */
const LISTED_HOLD_MS = 100

export interface BrowserJoinResult {
  notes: number
  roomMiB: number
  /** From the click on "Join and sync" until the recall screen showed an entity. */
  firstRecallMs: number
  /** What the sync panel said then: "x of y" pieces applied, or "complete". */
  firstRecallFrom: string
  /** Until the sync panel said "Synced". */
  syncedMs: number
  /** Until its "receiving this memory" line went: the engine applied every piece. */
  appliedMs: number
  /** Until every note was saved in the memory's IndexedDB (read from the page every 250 ms). */
  savedMs: number
  notesSaved: number
  /** The longest the engine worker's thread was held, and how many holds passed 50 and 250 ms. */
  workerHoldMaxMs: number
  workerHoldsOver50: number
  workerHoldsOver250: number
  /** The holds over LISTED_HOLD_MS: ms after the click, and how long. */
  workerLongHolds: string
  /** The page's main thread: its longest task and how many passed 50 ms (PerformanceObserver longtask). */
  pageLongestTaskMs: number
  pageLongTasks: number
  serverLoopP99Ms: number
  serverLoopMaxMs: number
  serverRssGrowthMiB: number
  /** The share of the join the server's loop was running, and its CPU time: a loop late by much while mostly idle was kept off the CPU by the browser beside it. */
  serverLoopUtilization: number
  serverCpuMs: number
  /** The machine's 1-minute load average as the join began (2 cores, shared). */
  loadAtStart: number
}

interface HoldLog { max: number; over50: number; over250: number; long: Array<[number, number]> }
interface PageMarks { shown?: string; panel: Array<[number, string]>; firstEntityAt?: number; firstEntityFrom?: string; syncedAt?: number; appliedAt?: number; longTasks: Array<[number, number]> }

// The two watchers below are sent as source text: a function handed to the browser would carry
// the helpers tsx adds to named functions, which the page does not have.

/**
 * Installed in the page before the app: its long tasks, and the moments the screen first showed
 * an entity, said "Synced" and dropped its "receiving this memory" line, timed as they happen
 * (epoch ms: the page's and the worker's clocks start apart).
 */
const WATCH_PAGE = `(() => {
  const stamp = () => performance.timeOrigin + performance.now()
  const marks = { longTasks: [], panel: [] }
  window.cairnJoinMarks = marks
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) marks.longTasks.push([performance.timeOrigin + e.startTime, e.duration])
  }).observe({ type: 'longtask', buffered: true })
  let receiving = false
  const look = () => {
    const first = document.querySelector('[data-testid="sync-first"]')
    if (first) receiving = true
    if (marks.firstEntityAt === undefined && document.querySelector('[data-testid="recalled-entities"] li')) {
      marks.firstEntityAt = stamp()
      marks.firstEntityFrom = first ? (/(\\d+ of \\d+)/.exec(first.textContent || '') || [, 'receiving'])[1] : 'complete'
    }
    if (marks.syncedAt === undefined && document.querySelector('[data-testid="sync-state"]')?.textContent === 'Synced') marks.syncedAt = stamp()
    if (marks.appliedAt === undefined && receiving && !first) marks.appliedAt = stamp()
    const shown = (document.querySelector('[data-testid="sync-state"]')?.textContent || '') + (first ? ' ' + ((/(\\d+ of \\d+)/.exec(first.textContent || '') || [])[1] || '') : '')
    if (shown !== marks.shown) marks.panel.push([stamp(), (marks.shown = shown)])
  }
  addEventListener('DOMContentLoaded', () => new MutationObserver(look).observe(document.body, { childList: true, subtree: true, characterData: true }))
})()`

/** Runs in the engine worker: a 10 ms timer; how late each tick comes is how long the thread was held. */
const WATCH_WORKER = `(() => {
  if (globalThis.cairnJoinHolds) return
  const holds = { max: 0, over50: 0, over250: 0, long: [] }
  globalThis.cairnJoinHolds = holds
  let due = performance.now() + 10
  setInterval(() => {
    const now = performance.now()
    const late = now - due
    holds.max = Math.max(holds.max, late)
    if (late > 50) holds.over50++
    if (late > 250) holds.over250++
    if (late > ${LISTED_HOLD_MS}) holds.long.push([performance.timeOrigin + due, late])
    due = now + 10
  }, 10)
})()`

const NOW = 'performance.timeOrigin + performance.now()'

/** The notes saved in the memory's IndexedDB, read from the page (not the worker, whose holds are measured). */
async function notesSaved(page: Page, memoryId: string): Promise<number> {
  return page.evaluate(async (name) => {
    if (!(await indexedDB.databases()).some((d) => d.name === name)) return 0
    return new Promise<number>((done, fail) => {
      const open = indexedDB.open(name)
      open.onerror = () => fail(open.error)
      open.onsuccess = () => {
        const db = open.result
        const count = db.transaction('observations').objectStore('observations').count()
        count.onsuccess = () => (db.close(), done(count.result))
        count.onerror = () => (db.close(), fail(count.error))
      }
    })
  }, `cairn-memory-${memoryId}`)
}

async function engineWorker(page: Page): Promise<Worker> {
  const deadline = Date.now() + 30_000
  for (;;) {
    const worker = page.workers().find((w) => w.url().includes('engine.worker'))
    if (worker) return worker
    if (Date.now() > deadline) throw new Error(`no engine worker in the page (workers: ${page.workers().map((w) => w.url()).join(', ') || 'none'})`)
    await page.waitForTimeout(50)
  }
}

/**
 * Profiles the page's engine worker through the DevTools protocol: Playwright offers no session
 * of its own for a worker, so a page session attaches to it and passes messages through.
 */
async function workerProfiler(context: BrowserContext, page: Page): Promise<{ start(): Promise<void>; stop(file: string): Promise<void> }> {
  const cdp = await context.newCDPSession(page)
  const answers = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>()
  let nextId = 1
  let session: string | undefined
  cdp.on('Target.attachedToTarget', (e) => {
    if (e.targetInfo.type === 'worker' && e.targetInfo.url.includes('engine.worker')) session = e.sessionId
  })
  cdp.on('Target.receivedMessageFromTarget', (e) => {
    const m = JSON.parse(e.message) as { id?: number; result?: unknown; error?: { message: string } }
    const answer = m.id === undefined ? undefined : answers.get(m.id)
    if (!answer) return
    answers.delete(m.id!)
    if (m.error) answer.reject(new Error(m.error.message))
    else answer.resolve(m.result)
  })
  await cdp.send('Target.setAutoAttach', { autoAttach: true, waitForDebuggerOnStart: false, flatten: false })
  const send = <T>(method: string, params: object = {}): Promise<T> => {
    if (!session) return Promise.reject(new Error('the engine worker is not attached'))
    const id = nextId++
    return new Promise<T>((resolve, reject) => {
      answers.set(id, { resolve: resolve as (v: unknown) => void, reject })
      cdp.send('Target.sendMessageToTarget', { sessionId: session!, message: JSON.stringify({ id, method, params }) }).catch(reject)
    })
  }
  return {
    async start() {
      await send('Profiler.enable')
      await send('Profiler.setSamplingInterval', { interval: 500 })
      await send('Profiler.start')
    },
    async stop(file) {
      const { profile } = await send<{ profile: unknown }>('Profiler.stop')
      writeFileSync(file, JSON.stringify(profile))
      console.error(`engine worker CPU profile: ${file}`)
    },
  }
}

export async function benchFirstSyncJoinBrowser(notes: number): Promise<BrowserJoinResult> {
  if (!existsSync(CHROMIUM_PATH)) throw new Error(`this benchmark needs Chromium at ${CHROMIUM_PATH} (apt-get install -y chromium)`)
  // a profile names the functions as written
  const { dir, cleanup } = await buildPage('index.html', null, !process.env.CAIRN_JOIN_CPU_PROF)
  const userDataDir = await mkdtemp(join(tmpdir(), 'cairn-join-profile-'))
  const web = await serve(dir)
  try {
    return await withHeldRoom(notes, async (room) => {
      const context = await chromium.launchPersistentContext(userDataDir, { executablePath: CHROMIUM_PATH, headless: true, args: CHROMIUM_ARGS, baseURL: web.baseUrl })
      // closed before the server stops, so the app does not try to reconnect meanwhile
      try {
        return await joinIn(context, notes, room)
      } finally {
        await context.close().catch(() => undefined)
      }
    })
  } finally {
    await web.server.close().catch(() => undefined)
    await rm(userDataDir, { recursive: true, force: true })
    await cleanup()
  }
}

/** The join itself, in a fresh profile: from the pairing link until every note is saved. */
async function joinIn(context: BrowserContext, notes: number, { server, memoryId, roomBytes }: HeldRoom): Promise<BrowserJoinResult> {
  const errors: string[] = []
  context.setDefaultTimeout(JOIN_TIMEOUT_MS)
  context.on('weberror', (e) => errors.push(e.error().message))
  await context.addInitScript({ content: WATCH_PAGE })
  // the pairing link the first device would show: the memory's id, name and retrieval, the server and a token for this device
  const token = await server.addToken(memoryId, 'full', 'second device')
  const code = encodeJoinCode(
    { id: memoryId, name: 'Harbour notes', retrieval: { embedder: BM25_ONLY, modelChecksum: '', dimensions: 0, weights: { text: 1, vector: 0 }, snippetLength: SNIPPET_LENGTH.default } },
    server.url,
    token,
  )
  const page = await context.newPage()
  const profileTo = process.env.CAIRN_JOIN_CPU_PROF
  const profiler = profileTo ? await workerProfiler(context, page) : undefined
  await page.goto(`/#/join/${code}`)
  await page.waitForSelector('html[data-ready="true"]')
  const join = page.getByRole('button', { name: 'Join and sync' })
  await join.waitFor()
  await (await engineWorker(page)).evaluate(WATCH_WORKER)
  await server.reset()
  const rssStart = (await server.stats()).rss
  const loadAtStart = loadavg()[0]!
  await profiler?.start()
  const started = await page.evaluate<number>(NOW)
  await join.click()
  // the app goes to the recall screen; ask until an entity shows (the screen then asks again by itself as notes arrive)
  const query = page.getByLabel('Query', { exact: true })
  await query.fill(QUERY)
  const ask = page.getByRole('button', { name: 'Recall', exact: true })
  const deadline = Date.now() + JOIN_TIMEOUT_MS
  let saved = 0
  let savedAt: number | undefined
  for (;;) {
    const marks = await page.evaluate<PageMarks>('window.cairnJoinMarks')
    if (marks.firstEntityAt === undefined && (await ask.isEnabled())) await ask.click()
    if (marks.syncedAt !== undefined) {
      saved = await notesSaved(page, memoryId)
      if (saved >= notes) savedAt ??= await page.evaluate<number>(NOW)
    }
    if (marks.firstEntityAt !== undefined && marks.appliedAt !== undefined && savedAt !== undefined) break
    if (errors.length) throw new Error(`the app reported errors: ${errors.join('; ')}`)
    if (Date.now() > deadline) throw new Error(`the join did not finish within ${JOIN_TIMEOUT_MS / 60_000} minutes: ${JSON.stringify({ ...marks, longTasks: marks.longTasks.length, saved })}`)
    await page.waitForTimeout(marks.syncedAt === undefined ? 50 : 250)
  }
  if (profiler) await profiler.stop(resolve(profileTo!))
  const marks = await page.evaluate<PageMarks>('window.cairnJoinMarks')
  const holds = await (await engineWorker(page)).evaluate<HoldLog>('globalThis.cairnJoinHolds')
  const stats = await server.stats()
  const since = (t: number): number => Math.round(t - started)
  const longTasks = marks.longTasks.filter(([t]) => t >= started)
  // what the sync panel said, and when: where a slow stretch was
  console.error(`sync panel: ${marks.panel.map(([t, said]) => `${since(t)} ${said}`).join(' | ')}`)
  return {
    notes,
    roomMiB: round(roomBytes / MiB),
    firstRecallMs: since(marks.firstEntityAt!),
    firstRecallFrom: marks.firstEntityFrom!,
    syncedMs: since(marks.syncedAt!),
    appliedMs: since(marks.appliedAt!),
    savedMs: since(savedAt!),
    notesSaved: saved,
    workerHoldMaxMs: round(holds.max),
    workerHoldsOver50: holds.over50,
    workerHoldsOver250: holds.over250,
    workerLongHolds: holds.long.filter(([t]) => t >= started).map(([t, ms]) => `${since(t)}+${Math.round(ms)}`).join(' '),
    pageLongestTaskMs: round(Math.max(0, ...longTasks.map(([, d]) => d))),
    pageLongTasks: longTasks.length,
    serverLoopP99Ms: round(stats.loopDelay.p99),
    serverLoopMaxMs: round(stats.loopDelay.max),
    serverRssGrowthMiB: round((stats.peakRss - rssStart) / MiB),
    serverLoopUtilization: round(stats.loopUtilization, 2),
    serverCpuMs: Math.round(stats.cpuMs),
    loadAtStart: round(loadAtStart, 2),
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const notes = Number(process.argv.slice(2).find((a) => /^\d+$/.test(a)) ?? 10_000)
  const r = await benchFirstSyncJoinBrowser(notes)
  console.log(`\nA second device joins ${notes} notes in headless Chromium (built app, engine worker, real IndexedDB)`)
  console.table([r])
  mkdirSync('bench/results', { recursive: true })
  writeFileSync('bench/results/first-sync-join-browser.json', JSON.stringify({ at: new Date().toISOString(), ...r }, null, 2))
  process.exit(0)
}
