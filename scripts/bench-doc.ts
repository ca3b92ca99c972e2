// Writes docs/benchmarks.md from bench/results/bench.json: the goals judged against one run, each
// section's figures, and the command that reproduces each. `npm run bench:doc`; `npm run bench`
// calls it at its end, so the page always shows the last run and never a figure typed by hand.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname } from 'node:path'
import type { AliasAcceptRow } from '../test/bench/alias-accept'
import type { CutRow } from '../test/bench/access-cut'
import type { AppBench } from '../test/bench/app'
import type { BrowserEngineRow } from '../test/bench/browser-engine'
import type { CaptureBench } from '../test/bench/capture'
import type { EmbedBench } from '../test/bench/embed'
import type { EngineBenchRow } from '../test/bench/engine'
import type { EntityIndexBench } from '../test/bench/entity-index'
import type { GraphViewBench } from '../test/bench/graph-view'
import type { HostileRow, PersistRow } from '../test/bench/hostile-server'
import type { HubRow } from '../test/bench/hub'
import type { McpBenchRow } from '../test/bench/mcp'
import type { DurableRow, ImportRow, PackageSizeRow } from '../test/bench/package'
import type { PeersBench } from '../test/bench/peers/index'
import type { RederiveRow } from '../test/bench/rederive'
import type { ClusterBenchRow } from '../test/bench/sync-cluster'
import type { SyncBenchRow } from '../test/bench/sync'
import type { UpdateCheckRow } from '../test/bench/update-check'
import type { Row as YjsApplyRow } from '../test/bench/yjs-apply'
import type { SyncLoadResult } from '../test/load/sync-server'

/** A section that threw is kept in bench.json as the reason it was skipped. */
export type Section<T> = T | { skipped: string }

/** What `npm run bench` writes (test/bench/run.ts); every section may be missing from an older file. */
export interface BenchResults {
  at: string
  quick: boolean
  node: string
  machine?: { cpus: number; model: string; loadAverageAtStart: number[]; loadAverageAtEnd?: number[] }
  engine?: EngineBenchRow[]
  hub?: Section<HubRow[]>
  embed?: EmbedBench
  entityIndex?: Section<EntityIndexBench>
  sync?: Section<SyncBenchRow[]>
  updateCheck?: Section<UpdateCheckRow[]>
  revoke?: Section<CutRow[]>
  orgAccess?: Section<CutRow[]>
  orgCutsRedis?: Section<CutRow[]>
  yjsApply?: Section<YjsApplyRow[]>
  syncLoad?: Section<SyncLoadResult>
  syncCluster?: Section<{ rows: ClusterBenchRow[] }>
  hostileServer?: Section<{ load: HostileRow[]; persist: PersistRow[] }>
  rederive?: Section<RederiveRow[]>
  aliasAccept?: Section<AliasAcceptRow[]>
  browserEngine?: Section<BrowserEngineRow[]>
  app?: Section<AppBench>
  capture?: Section<CaptureBench>
  graphView?: Section<GraphViewBench[]>
  peers?: Section<PeersBench>
  mcp?: Section<McpBenchRow[]>
  package?: Section<{ size: PackageSizeRow; durable: DurableRow[]; mcpImport: ImportRow[] }>
  failedSections?: string[]
}

export const BENCH_JSON = 'bench/results/bench.json'
export const BENCH_DOC = 'docs/benchmarks.md'

function ran<T>(s: Section<T> | undefined): T | undefined {
  return s === undefined || (typeof s === 'object' && s !== null && 'skipped' in s) ? undefined : (s as T)
}

function skipped(s: Section<unknown> | undefined): string {
  return s && typeof s === 'object' && 'skipped' in s ? `not run: ${(s as { skipped: string }).skipped.split('\n')[0]}` : 'not in this run'
}

/** Figures at the precision a reader can use: whole numbers from 100, one decimal from 10, two below. */
export function num(x: number | null | undefined): string {
  if (x === null || x === undefined || !Number.isFinite(x)) return '–'
  const abs = Math.abs(x)
  const digits = abs >= 100 ? 0 : abs >= 10 ? 1 : 2
  return x.toLocaleString('en-US', { minimumFractionDigits: 0, maximumFractionDigits: digits })
}

const ms = (x: number | null | undefined) => `${num(x)} ms`
const count = (x: number) => x.toLocaleString('en-US')
const cell = (s: string) => s.replace(/\|/g, '\\|').replace(/\n/g, ' ')

export function table(headers: string[], rows: string[][]): string {
  return [`| ${headers.map(cell).join(' | ')} |`, `|${headers.map(() => '---').join('|')}|`, ...rows.map((r) => `| ${r.map(cell).join(' | ')} |`)].join('\n')
}

export type Verdict = 'met' | 'missed' | 'not judged'

export interface Judged {
  figure: string
  verdict: Verdict
  /** Why a figure was not judged: the goal's size was not run (a quick run), or the section did not run. */
  why?: string
}

export interface Goal {
  goal: string
  /** The command that measures this goal alone. */
  command: string
  judge(r: BenchResults): Judged
}

/**
 * Judges a goal set at one size against the row of that size; a run that stopped below it (a quick
 * run) shows its largest size's figure, unjudged, since these figures grow with size.
 */
function atSize<R>(rows: R[] | undefined, sizeOf: (r: R) => number, size: number, value: (r: R) => number, limit: number, show: (r: R) => string, orNot: string): Judged {
  if (!rows || rows.length === 0) return { figure: '–', verdict: 'not judged', why: orNot }
  const exact = rows.find((r) => sizeOf(r) === size)
  if (exact) return { figure: show(exact), verdict: value(exact) < limit ? 'met' : 'missed' }
  const largest = rows.reduce((a, b) => (sizeOf(b) > sizeOf(a) ? b : a))
  return { figure: `${show(largest)} at ${count(sizeOf(largest))}`, verdict: 'not judged', why: `this run stopped at ${count(sizeOf(largest))}; the goal is at ${count(size)}` }
}

const browserHybrid = (r: BenchResults) => ran(r.browserEngine)?.filter((row) => row.recall === 'hybrid')

/** The goals, each with the limit it is judged by and the command that measures it alone. */
export const GOALS: Goal[] = [
  {
    goal: 'Chromium cold open (open + first recall), 10,000 observations, hybrid: < 600 ms',
    command: 'npx tsx test/bench/browser-engine.ts 10000 --hybrid',
    judge: (r) => atSize(browserHybrid(r), (x) => x.observations, 10_000, (x) => x.coldOpenMs, 600, (x) => ms(x.coldOpenMs), skipped(r.browserEngine)),
  },
  {
    goal: 'Chromium cold open, 100,000 observations, hybrid: < 2 s',
    command: 'CAIRN_BENCH_PROFILE=<dir> npx tsx test/bench/browser-engine.ts 100000 --hybrid',
    judge: (r) => atSize(browserHybrid(r), (x) => x.observations, 100_000, (x) => x.coldOpenMs, 2_000, (x) => ms(x.coldOpenMs), skipped(r.browserEngine)),
  },
  {
    goal: 'Chromium hybrid recall p50 at 100,000 observations: < 15 ms',
    command: 'as the row above',
    judge: (r) => atSize(browserHybrid(r), (x) => x.observations, 100_000, (x) => x.recallP50Ms, 15, (x) => ms(x.recallP50Ms), skipped(r.browserEngine)),
  },
  {
    goal: 'Chromium hybrid recall p50 at 100,000 within 2x the floor (one read of the stored vectors)',
    command: 'as the row above',
    judge: (r) => atSize(browserHybrid(r), (x) => x.observations, 100_000, (x) => x.recallOverFloor, 2, (x) => (x.floorMs ? `${num(x.recallOverFloor)}x a ${ms(x.floorMs)} floor` : `${ms(x.recallP50Ms)}, the floor too short to time`), skipped(r.browserEngine)),
  },
  {
    goal: 'Writes when one entity is named in 5,000 notes: p95 < 5 ms',
    command: 'npx tsx test/bench/hub.ts 1000 5000',
    judge: (r) => atSize(ran(r.hub), (x) => x.hubObservations, 5_000, (x) => x.writeP95Ms, 5, (x) => `p95 ${ms(x.writeP95Ms)} (p50 ${ms(x.writeP50Ms)})`, skipped(r.hub)),
  },
  {
    goal: 'App: time to interactive, cold: < 800 ms',
    command: 'npx tsx test/bench/app-alone.ts 3',
    judge: (r) => {
      const app = ran(r.app)
      if (!app) return { figure: '–', verdict: 'not judged', why: skipped(r.app) }
      return { figure: `${ms(app.coldMs.median)} (median of ${app.coldMs.runs.length})`, verdict: app.coldMs.median < 800 ? 'met' : 'missed' }
    },
  },
  {
    goal: 'App: JavaScript before the first screen is interactive: < 250 kB gzip',
    command: 'npx tsx test/bench/app-alone.ts 3',
    judge: (r) => {
      const app = ran(r.app)
      if (!app) return { figure: '–', verdict: 'not judged', why: skipped(r.app) }
      return { figure: `${num(app.firstLoad.gzipBytes / 1000)} kB`, verdict: app.firstLoad.gzipBytes < app.firstLoad.goalGzipBytes ? 'met' : 'missed' }
    },
  },
  {
    goal: 'Capture: fields typed per note: at most 6',
    command: 'npx tsx test/bench/capture-alone.ts',
    judge: (r) => {
      const c = ran(r.capture)
      if (!c) return { figure: '–', verdict: 'not judged', why: skipped(r.capture) }
      return { figure: String(c.goal.fieldsNow), verdict: c.goal.fieldsNow <= c.goal.fieldsGoal ? 'met' : 'missed' }
    },
  },
  {
    goal: 'Durable Node store: restart (open + first recall) at 10,000 observations: < 1 s',
    command: 'npx tsx test/bench/durable-alone.ts 10000',
    judge: (r) => atSize(ran(r.package)?.durable.filter((x) => x.store === 'durable'), (x) => x.observations, 10_000, (x) => x.restartMs, 1_000, (x) => `${ms(x.restartMs)} (CPU ${ms(x.restartCpuMs)})`, skipped(r.package)),
  },
  {
    goal: 'Importing a 10,000-entity MCP memory server file: < 10 s',
    command: 'npx tsx test/bench/durable-alone.ts 10000',
    judge: (r) => atSize(ran(r.package)?.mcpImport, (x) => x.entities, 10_000, (x) => x.importMs, 10_000, (x) => `${ms(x.importMs)} (CPU ${ms(x.importCpuMs)})`, skipped(r.package)),
  },
  {
    goal: 'MCP writes on the durable store at 10,000 observations: p50 < 5 ms and p95 < 20 ms',
    command: 'npx tsx test/bench/durable-alone.ts 10000',
    // both limits at once: 0 when both hold
    judge: (r) => atSize(ran(r.package)?.durable.filter((x) => x.store === 'durable'), (x) => x.observations, 10_000, (x) => (x.writeP50Ms < 5 && x.writeP95Ms < 20 ? 0 : 1), 1, (x) => `p50 ${ms(x.writeP50Ms)}, p95 ${ms(x.writeP95Ms)}`, skipped(r.package)),
  },
  {
    goal: 'Package: tarball < 10 MB; a browser project installing it: node_modules < 30 MB',
    command: 'npx tsx test/bench/package-alone.ts 10000',
    judge: (r) => {
      const size = ran(r.package)?.size
      if (!size) return { figure: '–', verdict: 'not judged', why: skipped(r.package) }
      return { figure: `${num(size.tarballMB)} MB; ${num(size.installMB)} MB`, verdict: size.tarballMB < 10 && size.installMB < 30 ? 'met' : 'missed' }
    },
  },
  {
    goal: 'Sync server event-loop delay p99 under each hostile load, with its limits: < 50 ms',
    command: 'npx tsx test/bench/hostile-server.ts --quick',
    judge: (r) => {
      // the idle row is the floor the loads are read against, not a load
      const rows = ran(r.hostileServer)?.load.filter((x) => x.limits === 'current' && !x.scenario.startsWith('idle'))
      if (!rows || rows.length === 0) return { figure: '–', verdict: 'not judged', why: skipped(r.hostileServer) }
      return { figure: rows.map((x) => `${x.scenario.split(':')[0]} ${ms(x.loopDelayP99Ms)}`).join('; '), verdict: rows.every((x) => x.loopDelayP99Ms < 50) ? 'met' : 'missed' }
    },
  },
  {
    goal: 'Revoke: from the call to the sync server closing the socket, p95 < 100 ms',
    command: 'npx tsx test/bench/revoke.ts 20',
    judge: (r) => cutGoal(ran(r.revoke), skipped(r.revoke)),
  },
  {
    goal: 'Organization access cut (member removed, memory made private), p95 < 100 ms',
    command: 'npx tsx test/bench/org-access.ts 20',
    judge: (r) => cutGoal(ran(r.orgAccess), skipped(r.orgAccess)),
  },
  {
    goal: 'Organization cut across 3 servers on one Redis (on server A, enforced on B and C), p95 < 100 ms',
    command: 'npx tsx test/bench/org-cuts-redis.ts 20',
    judge: (r) => cutGoal(ran(r.orgCutsRedis), skipped(r.orgCutsRedis)),
  },
]

function cutGoal(rows: CutRow[] | undefined, orNot: string): Judged {
  if (!rows || rows.length === 0) return { figure: '–', verdict: 'not judged', why: orNot }
  const met = rows.every((x) => x.p95Ms < 100 && x.allRefused)
  return { figure: rows.map((x) => `${x.path}: ${ms(x.p95Ms)}${x.allRefused ? '' : ' (not refused)'}`).join('; '), verdict: met ? 'met' : 'missed' }
}

export function goalsTable(r: BenchResults): string {
  return table(
    ['goal', 'this run', 'verdict', 'alone'],
    GOALS.map((g) => {
      const j = g.judge(r)
      return [g.goal, j.figure, j.why ? `${j.verdict} (${j.why})` : j.verdict, g.command.startsWith('as ') ? g.command : `\`${g.command}\``]
    }),
  )
}

interface SectionDoc {
  title: string
  /** What is measured and how, in a sentence or two. */
  about: string
  command: string
  body(r: BenchResults): string | undefined
  /** The key in bench.json, for the reason a section did not run. */
  key: keyof BenchResults
}

const SECTIONS: SectionDoc[] = [
  {
    title: 'Engine in Node',
    about: 'In Node on fake-indexeddb; each observation names 3 entities and states 2 relationships. Cold open = close (saving the index), then open and answer a recall.',
    command: 'npm run bench (this section has no command of its own)',
    key: 'engine',
    body: (r) => r.engine && table(['recall', 'observations', 'write p50', 'write p95', 'writes/s', 'recall p50', 'recall p95', 'derive from scratch', 'cold open'], r.engine.map((x) => [x.recall, count(x.observations), ms(x.writeP50Ms), ms(x.writeP95Ms), num(x.writesPerSecond), ms(x.recallP50Ms), ms(x.recallP95Ms), ms(x.deriveFromScratchMs), ms(x.coldOpenMs)])),
  },
  {
    title: 'One entity named in every note',
    about: 'writes and recall when the memory\'s owner is named in every note (BM25, fake-indexeddb); the write\'s cost should not grow with the entity\'s notes.',
    command: 'npx tsx test/bench/hub.ts 1000 5000',
    key: 'hub',
    body: (r) => ran(r.hub) && table(['notes naming it', 'write p50', 'write p95', 'recall p50', 'note found first', 'write right after an open'], ran(r.hub)!.map((x) => [count(x.hubObservations), ms(x.writeP50Ms), ms(x.writeP95Ms), ms(x.recallP50Ms), `${num(x.recallFoundFirst * 100)}%`, ms(x.writeAfterOpenMs)])),
  },
  {
    title: 'Engine in Chromium',
    about: 'real IndexedDB, module worker, the shipped model. Cold open = open + first recall in a fresh worker, median of 3; floor = one tight read of the stored vector bytes in the same worker. `CAIRN_BENCH_PROFILE=<dir>` keeps the filled profile between runs, `CAIRN_BENCH_DIST=<dir>` reuses a build.',
    command: 'npx tsx test/bench/browser-engine.ts 10000 --hybrid',
    key: 'browserEngine',
    body: (r) => ran(r.browserEngine) && table(['recall', 'observations', 'cold open', 'first recall', 'recall p50', 'recall p95', 'floor', 'write right after an open', 'writes p50 / p95'], ran(r.browserEngine)!.map((x) => [x.recall, count(x.observations), ms(x.coldOpenMs), ms(x.firstRecallMs), ms(x.recallP50Ms), ms(x.recallP95Ms), x.floorMs ? ms(x.floorMs) : '–', ms(x.firstWriteMs), `${ms(x.writeP50Ms)} / ${ms(x.writeP95Ms)}`])),
  },
  {
    title: 'The app',
    about: 'the production build in headless Chromium: time to interactive (navigation until the engine worker answers the memory list), cold and warm from the service worker.',
    command: 'npx tsx test/bench/app-alone.ts 3',
    key: 'app',
    body: (r) => {
      const a = ran(r.app)
      return a && table(['first-load JS (gzip)', 'cold', 'warm', 'warm from the service worker'], [[`${num(a.firstLoad.gzipBytes / 1000)} kB`, `${ms(a.coldMs.median)} (runs: ${a.coldMs.runs.join(', ')})`, ms(a.warmMs.median), a.warmFromServiceWorker ? 'yes' : 'no']])
    },
  },
  {
    title: 'Capture',
    about: 'a scripted person types the same 10 notes with the keyboard alone; the bench then checks each note was written as scripted.',
    command: 'npx tsx test/bench/capture-alone.ts',
    key: 'capture',
    body: (r) => ran(r.capture) && table(['way', 'fields per note', 'keystrokes per note', 'beyond the note\'s words'], ran(r.capture)!.rows.map((x) => [x.way, num(x.fieldsPerNote), num(x.keystrokesPerNote), num(x.overheadKeystrokesPerNote)])),
  },
  {
    title: 'Graph view',
    about: 'headless Chromium with no GPU (WebGL on SwiftShader), so frame times are the software renderer\'s; baseline = main-thread layout drawing everything while moving, app = the shipped scene.',
    command: 'npm run bench (section "graph view")',
    key: 'graphView',
    body: (r) => ran(r.graphView) && table(['scene', 'nodes', 'edges', 'first frame', 'drag frame p50', 'render JS p50'], ran(r.graphView)!.map((x) => [x.scene, count(x.nodes), count(x.edges), ms(x.firstFrameMs), ms(x.dragFrameMsP50), ms(x.renderJsMsP50)])),
  },
  {
    title: 'Sync between two devices',
    about: 'two devices with N offline observations each connect through a real server on 127.0.0.1; median of 3.',
    command: 'npm run bench (section "sync")',
    key: 'sync',
    body: (r) => ran(r.sync) && table(['observations per device', 'converged', 'document bytes per 1,000', 'plain JSON per 1,000'], ran(r.sync)!.map((x) => [count(x.observationsPerDevice), ms(x.convergeMs), count(x.docBytesPer1000), count(x.jsonBytesPer1000)])),
  },
  {
    title: 'Judging an update on the sync server',
    about: 'one small `read_write` update judged against the kept copy of a room, beside copying the room first.',
    command: 'npx tsx test/bench/update-check.ts 1000 10000',
    key: 'updateCheck',
    body: (r) => ran(r.updateCheck) && table(['observations', 'room bytes', 'check p50', 'check p95', 'copying the room p50'], ran(r.updateCheck)!.map((x) => [count(x.observations), count(x.roomBytes), ms(x.checkP50Ms), ms(x.checkP95Ms), ms(x.copyRoomP50Ms)])),
  },
  {
    title: 'Revoke',
    about: 'from the call to the sync server closing the live socket (4410); a new socket with the same token must be refused.',
    command: 'npx tsx test/bench/revoke.ts 20',
    key: 'revoke',
    body: (r) => ran(r.revoke) && cutTable(ran(r.revoke)!),
  },
  {
    title: 'Organization access cut',
    about: 'from removing a member or making a memory private to the sync server closing the member\'s socket (4411 / 4412).',
    command: 'npx tsx test/bench/org-access.ts 20',
    key: 'orgAccess',
    body: (r) => ran(r.orgAccess) && cutTable(ran(r.orgAccess)!),
  },
  {
    title: 'Organization cut across servers on Redis',
    about: 'three sync servers sharing one Redis (in one process with the clients): from the call on server A (a member removed by A or by another process, a memory unlisted, a memory made private by its owner\'s socket on A) to servers B and C both closing the member\'s socket (4411 / 4412) and refusing its credential.',
    command: 'npx tsx test/bench/org-cuts-redis.ts 20',
    key: 'orgCutsRedis',
    body: (r) => ran(r.orgCutsRedis) && cutTable(ran(r.orgCutsRedis)!),
  },
  {
    title: 'Remote updates',
    about: 'the same peer updates applied to a plain Y.Doc and to a memory (check, re-derive, IndexedDB, index); separate = one update per message, merged = the batch as one. Per update, median run.',
    command: 'npx tsx test/bench/yjs-apply-alone.ts',
    key: 'yjsApply',
    body: (r) => ran(r.yjsApply) && table(['held', 'batch', 'mode', 'raw Yjs', 'Cairn', 'of it: storage', 'of it: re-derive'], ran(r.yjsApply)!.map((x) => [count(x.held), count(x.batch), x.mode, ms(x.rawMsPerUpdate), ms(x.cairnMsPerUpdate), x.split ? ms(x.split.storage) : '–', x.split ? ms(x.split.rederive) : '–'])),
  },
  {
    title: 'Re-derivation after a merge',
    about: '100 observations from a peer, applied through the sync document onto a memory already holding N.',
    command: 'npm run bench (section "re-derive")',
    key: 'rederive',
    body: (r) => ran(r.rederive) && table(['recall', 'held', 'merged', 'merge', 'per observation'], ran(r.rederive)!.map((x) => [x.recall, count(x.held), count(x.merged), ms(x.mergeMs), ms(x.perObservationMs)])),
  },
  {
    title: 'Accepting a merge',
    about: 'onto a memory holding N observations, the variant named by 20 notes; median of the accepts.',
    command: 'npx tsx test/bench/commit-path-alone.ts alias',
    key: 'aliasAccept',
    body: (r) => ran(r.aliasAccept) && table(['recall', 'held', 'accepts', 'accept p50', 'accept max'], ran(r.aliasAccept)!.map((x) => [x.recall, count(x.held), count(x.accepts), ms(x.acceptP50Ms), ms(x.acceptMaxMs)])),
  },
  {
    title: 'Sync server under load',
    about: '50 y-websocket clients over 3 memories on 127.0.0.1, every 5th dropping offline now and then; the server in its own process.',
    command: 'npm run bench (section "sync server load")',
    key: 'syncLoad',
    body: (r) => {
      const s = ran(r.syncLoad)
      return s && table(['seconds', 'writes', 'writes/s', 'deliveries/s', 'write to peer p50 / p95', 'converged after', 'server peak RSS', 'server loop p99'], [[num(s.durationMs / 1000), count(s.writes), num(s.updatesPerSecond), num(s.deliveriesPerSecond), `${ms(s.latencyMs.p50)} / ${ms(s.latencyMs.p95)}`, ms(s.convergeMs), `${num(s.server.peakRssMiB)} MiB`, ms(s.server.loopDelayMs.p99)]])
    },
  },
  {
    title: 'Sync servers side by side',
    about: '60 clients over 3 memories writing twice a second each, through a round-robin TCP balancer, every server in its own process; Redis with `appendfsync always`. Latency = write to arrival at another client.',
    command: 'npx tsx test/bench/sync-cluster.ts --quick',
    key: 'syncCluster',
    body: (r) => ran(r.syncCluster) && table(['setup', 'writes/s', 'deliveries/s', 'latency p50 / p95', 'worst server loop p99', 'problems'], ran(r.syncCluster)!.rows.map((x) => [x.setup, num(x.writesPerSecond), num(x.deliveriesPerSecond), `${ms(x.latencyP50Ms)} / ${ms(x.latencyP95Ms)}`, ms(x.serverLoopP99Ms), String(x.problems)])),
  },
  {
    title: 'Sync server under hostile load',
    about: 'authenticated clients sending what a valid token allows, with the server\'s limits and without them; event-loop delay of the server process over the run.',
    command: 'npx tsx test/bench/hostile-server.ts --quick',
    key: 'hostileServer',
    body: (r) => {
      const h = ran(r.hostileServer)
      return h && table(['scenario', 'limits', 'updates', 'MiB', 'refused', 'loop p50', 'loop p99', 'loop max'], h.load.map((x) => [x.scenario, x.limits, count(x.updates), num(x.mib), count(x.refusals), ms(x.loopDelayP50Ms), ms(x.loopDelayP99Ms), ms(x.loopDelayMaxMs)])) + '\n\n' + table(['stored before relaying?', 'writes', 'delivery p50', 'delivery p95'], h.persist.map((x) => [x.order, count(x.writes), ms(x.deliveryP50Ms), ms(x.deliveryP95Ms)]))
    },
  },
  {
    title: 'Peers on one workload',
    about: 'WordNet nouns as entities, the same queries to Cairn, the official MCP memory server, and Orama and MiniSearch alone; p50 and p95. The chart is bench/results/latency.svg.',
    command: 'npm run bench (section "peers")',
    key: 'peers',
    body: (r) => {
      const p = ran(r.peers)
      return p && table(['system', 'operation', 'entities', 'p50', 'p95'], p.rows.filter((x) => x.operation !== 'ping').map((x) => [x.system, x.operation, count(x.entities), ms(x.p50Ms), ms(x.p95Ms)]))
    },
  },
  {
    title: 'Agent tool calls',
    about: 'recall round trips through the MCP server with the official SDK client (stdio, Streamable HTTP on 127.0.0.1) beside `dispatchTool` in-process.',
    command: 'npx tsx test/bench/mcp-alone.ts 10000',
    key: 'mcp',
    body: (r) => ran(r.mcp) && table(['transport', 'observations', 'p50', 'p95', 'over in-process', 'payload p50'], ran(r.mcp)!.map((x) => [x.transport, count(x.observations), ms(x.p50Ms), ms(x.p95Ms), `${num(x.vsInProcessP50)}x`, `${count(x.payloadP50Bytes)} B`])),
  },
  {
    title: 'The package and the durable Node store',
    about: 'the packed tarball and what a browser project installing it holds; MCP writes and a restart on the durable store (hybrid); importing an MCP memory server file.',
    command: 'npx tsx test/bench/package-alone.ts 10000',
    key: 'package',
    body: (r) => {
      const p = ran(r.package)
      if (!p) return undefined
      return [
        table(['tarball', 'unpacked', 'files', 'a browser project\'s node_modules', 'packages'], [[`${num(p.size.tarballMB)} MB`, `${num(p.size.unpackedMB)} MB`, count(p.size.files), `${num(p.size.installMB)} MB`, count(p.size.installPackages)]]),
        table(['store', 'observations', 'write p50 / p95', 'restart', 'restart CPU', 'of it: reading the folder'], p.durable.map((x) => [x.store, count(x.observations), `${ms(x.writeP50Ms)} / ${ms(x.writeP95Ms)}`, ms(x.restartMs), ms(x.restartCpuMs), ms(x.restartStoreMs)])),
        table(['entities', 'file', 'import', 'import CPU'], p.mcpImport.map((x) => [count(x.entities), `${num(x.fileMB)} MB`, ms(x.importMs), ms(x.importCpuMs)])),
      ].join('\n\n')
    },
  },
  {
    title: 'Default embedder',
    about: '`cairn-glove-100d`, onnxruntime-web wasm on one thread, short texts.',
    command: 'npm run bench (section "embed")',
    key: 'embed',
    body: (r) => r.embed && table(['texts', 'batch', 'texts/s', 'texts/s one at a time'], [[count(r.embed.texts), count(r.embed.batchSize), count(Math.round(r.embed.textsPerSecond)), count(Math.round(r.embed.singleTextsPerSecond))]]),
  },
  {
    title: 'Entity index alone',
    about: 'BM25 and flat int8 vectors over WordNet glosses with the default embedder.',
    command: 'npm run bench (section "entity index")',
    key: 'entityIndex',
    body: (r) => ran(r.entityIndex) && table(['entities', 'BM25 p50', 'vector p50', 'hybrid p50', 'hybrid p95'], ran(r.entityIndex)!.rows.map((x) => [count(x.entities), ms(x.bm25P50Ms), ms(x.vectorP50Ms), ms(x.hybridP50Ms), ms(x.hybridP95Ms)])),
  },
]

function cutTable(rows: CutRow[]): string {
  return table(['path', 'rounds', 'p50', 'p95', 'max', 'refused after'], rows.map((x) => [x.path, count(x.rounds), ms(x.p50Ms), ms(x.p95Ms), ms(x.maxMs), x.allRefused ? 'yes' : 'NO']))
}

function command(c: string): string {
  return c.startsWith('npm run bench (') ? `\`npm run bench\` ${c.slice('npm run bench '.length)}` : `\`${c}\``
}

/** The whole page, from one bench.json. Pure: the same results give the same text. */
export function renderBenchDoc(r: BenchResults): string {
  const mode = r.quick ? '`npm run bench -- --quick` (quick mode: smaller sizes, so goals set at larger sizes are not judged)' : '`npm run bench` (full sizes)'
  const machine = r.machine ? `, ${r.machine.cpus} × ${r.machine.model}, load average ${r.machine.loadAverageAtStart.map((x) => x.toFixed(1)).join(' / ')} at the start` : ''
  const out: string[] = [
    '# Benchmarks',
    '',
    `<!-- Generated by \`npm run bench:doc\` (scripts/bench-doc.ts) from ${BENCH_JSON}; edit the script, not this file. -->`,
    '',
    `Generated from one run of ${mode} on ${r.at.slice(0, 10)}, Node ${r.node}${machine}.`,
    '`npm run bench` regenerates this page at its end; `npm run bench:doc` regenerates it from the last',
    `\`${BENCH_JSON}\`. Figures vary with the machine and its load: compare builds side by side in one sitting,`,
    'and judge a goal on a full run.',
    '',
    '## Goals',
    '',
    goalsTable(r),
  ]
  if (r.failedSections?.length) out.push('', `Sections that failed in this run: ${r.failedSections.join(', ')}.`)
  out.push('', '## Reproducing a figure', '', 'Each section below names the command that runs it alone; each writes its table to the console.',
    '`npm run bench` runs them all in one process, side by side on the same generated workloads, and writes',
    `\`${BENCH_JSON}\`. A section that fails makes the run exit non-zero; the others still run.`,
    '',
    'To compare two builds, run them alternately in one sitting on the same data:',
    '',
    '- In Chromium: build each once and pass it with `CAIRN_BENCH_DIST=<dir>`; `CAIRN_BENCH_PROFILE=<dir>` fills',
    '  a profile once and times later runs on fresh copies of it (served on one port, `CAIRN_BENCH_PORT`, since',
    '  IndexedDB belongs to an origin); `CAIRN_BENCH_COLD_RUNS` sets the cold opens per row.',
    '- The durable Node store: `bash test/bench/durable-compare.sh [BASE_REF] [SIZE]` runs the same bench on',
    '  another commit and on this tree, one after the other.',
    '- The sync server: `CAIRN_SERVER_CPU_PROF=<dir>` writes a CPU profile of the server process in the',
    '  benches that start one.')
  for (const s of SECTIONS) {
    out.push('', `## ${s.title}`, '', `${s.about[0]!.toUpperCase()}${s.about.slice(1)} Alone: ${command(s.command)}.`, '')
    out.push(s.body(r) ?? `_${skipped(r[s.key] as Section<unknown> | undefined)}._`)
  }
  return out.join('\n') + '\n'
}

export function writeBenchDoc(r: BenchResults, path = BENCH_DOC): void {
  mkdirSync(dirname(path), { recursive: true })
  writeFileSync(path, renderBenchDoc(r))
}

if (process.argv[1]?.endsWith('bench-doc.ts')) {
  const results = JSON.parse(readFileSync(BENCH_JSON, 'utf8')) as BenchResults
  writeBenchDoc(results)
  console.log(`wrote ${BENCH_DOC} from ${BENCH_JSON} (${results.at})`)
}
