// What Cairn adds on top of Yjs when remote changes arrive: the same K peer updates (new
// observations and edits of held ones, 3 entities and 2 relationships each) are applied to a
// plain Y.Doc and to a memory's bound sync document, which also validates them, re-derives
// the graph, writes IndexedDB (fake-indexeddb here) and updates the entity index. Both
// documents hold the same N observations and receive the same update bytes.
import * as Y from 'yjs'
import type { Observation } from '../../src/core/types'
import type { Embedder } from '../../src/search/embedder'
import { applyMemoryWrites, createMemoryDoc } from '../../src/sync/memory-doc'
import { observation, openHeld } from './rederive'
import { engineOf } from '../../src/internals'

export type ApplyMode = 'separate' | 'merged'

export interface Row {
  recall: 'bm25' | 'hybrid'
  /** Observations the memory holds before the batch. */
  held: number
  /** Updates per batch: half new observations, half edits of held ones. */
  batch: number
  /** `separate`: each update applied on its own, as they arrive one message at a time; `merged`: the batch as one update. */
  mode: ApplyMode
  runs: number
  /** Y.applyUpdate on a plain Y.Doc, per update (median run). */
  rawMsPerUpdate: number
  /** Until the engine has applied and re-derived everything, per update (median run). */
  cairnMsPerUpdate: number
  ratio: number
  /** Where Cairn's time goes, per update, in the median run; `null` when the engine could not be instrumented. */
  split: Split | null
}

export interface Split {
  /** Y.applyUpdate on the bound document: Yjs itself plus reading and checking the changed values. */
  docApply: number
  /** Graph.apply: re-deriving the touched entities and relationships in memory. */
  rederive: number
  /** IndexedDB read-write transactions (observation, entity and relationship rows). */
  storage: number
  /** Entity index upserts and removals (BM25, plus embedding in hybrid mode). */
  index: number
  /** The rest: queueing, awaits between the steps. */
  other: number
}

interface Timers {
  rederive: number
  storage: number
  index: number
}

/**
 * Wraps the engine's graph, database and index methods to add up the time spent in each.
 * This reads private fields, so it is a measurement aid only; it gives up (null) if they moved.
 */
function instrument(engine: object): Timers | null {
  const e = engine as { graph?: Record<string, unknown>; db?: Record<string, unknown>; index?: Record<string, unknown> }
  const graph = e.graph
  const db = e.db
  const index = e.index
  if (!graph || !db || !index || typeof graph.apply !== 'function' || typeof db.transaction !== 'function' || typeof index.upsert !== 'function' || typeof index.remove !== 'function') return null
  const timers: Timers = { rederive: 0, storage: 0, index: 0 }
  const wrapSync = (target: Record<string, unknown>, name: string, key: keyof Timers) => {
    const original = target[name] as (...args: unknown[]) => unknown
    target[name] = function (this: unknown, ...args: unknown[]) {
      const t0 = performance.now()
      try {
        return original.apply(this, args)
      } finally {
        timers[key] += performance.now() - t0
      }
    }
  }
  const wrapAsync = (target: Record<string, unknown>, name: string, key: keyof Timers) => {
    const original = target[name] as (...args: unknown[]) => PromiseLike<unknown>
    target[name] = function (this: unknown, ...args: unknown[]) {
      const t0 = performance.now()
      return Promise.resolve(original.apply(this, args)).finally(() => {
        timers[key] += performance.now() - t0
      })
    }
  }
  wrapSync(graph, 'apply', 'rederive')
  if (typeof graph.setAliases === 'function') wrapSync(graph, 'setAliases', 'rederive')
  wrapAsync(db, 'transaction', 'storage')
  wrapAsync(index, 'upsert', 'index')
  wrapAsync(index, 'remove', 'index')
  return timers
}

/** An edit of a held observation: new wording and a different set of entities and relationships. */
function edited(base: Observation, other: Observation, run: number): Observation {
  return {
    ...base,
    title: `${base.title} (revised ${run})`,
    content: `${base.content} Revised in run ${run}.`,
    entities: other.entities,
    relationships: other.relationships,
    updatedAt: new Date(Date.parse(base.updatedAt) + (run + 1) * 1000).toISOString(),
  }
}

/** The peer's updates for one batch, one per observation written, in order. */
function peerBatch(peer: Y.Doc, held: number, batch: number, pool: number, run: number): { updates: Uint8Array[]; added: string[] } {
  const updates: Uint8Array[] = []
  const onUpdate = (u: Uint8Array) => updates.push(u)
  peer.on('update', onUpdate)
  const added: string[] = []
  const fresh = Math.ceil(batch / 2)
  // edits walk through the held observations with a stride, so no run re-edits another's
  const stride = 7919
  try {
    for (let i = 0; i < batch; i++) {
      if (i < fresh) {
        const o = { ...observation(held + run * batch + i, pool), slug: `incoming-${run}-${i}` }
        added.push(o.slug)
        applyMemoryWrites(peer, { observations: { put: [o] } })
      } else {
        const j = ((run * batch + i) * stride) % held
        applyMemoryWrites(peer, { observations: { put: [edited(observation(j, pool), observation(held + j, pool), run)] } })
      }
    }
  } finally {
    peer.off('update', onUpdate)
  }
  return { updates, added }
}

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b)
  return s[Math.floor(s.length / 2)]!
}

const round = (x: number) => Math.round(x * 10_000) / 10_000

export interface YjsApplyOptions {
  /** Updates per batch; default 100. */
  batch?: number
  /** Timed runs per mode; default 5 (plus one untimed warm-up). */
  runs?: number
  modes?: ApplyMode[]
  embedder?: Embedder
}

export async function benchYjsApply(sizes: number[], options: YjsApplyOptions = {}): Promise<Row[]> {
  const batch = options.batch ?? 100
  const runs = options.runs ?? 5
  const modes = options.modes ?? ['separate', 'merged']
  const rows: Row[] = []
  for (const held of sizes) {
    const pool = Math.max(10, held * 2)
    const { memory, doc, binding, peer } = await openHeld(held, pool, options.embedder)
    try {
      const engine = engineOf(memory)
      const timers = instrument(engine)
      const raw = createMemoryDoc()
      Y.applyUpdate(raw, Y.encodeStateAsUpdate(peer))
      if (engine.committedGraph.observationCount !== held) throw new Error(`the memory holds ${engine.committedGraph.observationCount} observations, not ${held}`)
      let run = 0
      for (const mode of modes) {
        const samples: Array<{ raw: number; cairn: number; split: Split | null }> = []
        for (let r = 0; r <= runs; r++) {
          const { updates, added } = peerBatch(peer, held, batch, pool, run++)
          const incoming = mode === 'merged' ? [Y.mergeUpdates(updates)] : updates

          const applyRaw = () => {
            const r0 = performance.now()
            for (const u of incoming) Y.applyUpdate(raw, u, 'peer')
            return performance.now() - r0
          }
          // which side goes first alternates, so garbage left by building the batch is not always collected on one side's time
          let rawMs = r % 2 === 0 ? applyRaw() : 0
          const before = timers ? { ...timers } : null
          const c0 = performance.now()
          for (const u of incoming) Y.applyUpdate(doc, u, 'peer')
          const docApply = performance.now() - c0
          await binding.settled()
          const cairnMs = performance.now() - c0
          if (r % 2 === 1) rawMs = applyRaw()
          if (binding.failures.length) throw binding.failures[0]!
          if (engine.committedGraph.observationCount !== held + added.length) throw new Error('the engine did not apply every new observation')

          let split: Split | null = null
          if (timers && before) {
            const rederive = timers.rederive - before.rederive
            const storage = timers.storage - before.storage
            const index = timers.index - before.index
            split = { docApply, rederive, storage, index, other: Math.max(0, cairnMs - docApply - rederive - storage - index) }
          }
          if (r > 0) samples.push({ raw: rawMs, cairn: cairnMs, split })

          // back to N observations, so every run starts from the same size (untimed)
          const deletes: Uint8Array[] = []
          const onDelete = (u: Uint8Array) => deletes.push(u)
          peer.on('update', onDelete)
          applyMemoryWrites(peer, { observations: { delete: added } })
          peer.off('update', onDelete)
          for (const u of deletes) {
            Y.applyUpdate(raw, u, 'peer')
            Y.applyUpdate(doc, u, 'peer')
          }
          await binding.settled()
        }
        const mid = [...samples].sort((a, b) => a.cairn - b.cairn)[Math.floor(samples.length / 2)]!
        const rawMs = median(samples.map((s) => s.raw))
        const cairnMs = median(samples.map((s) => s.cairn))
        const per = (x: number) => round(x / batch)
        rows.push({
          recall: options.embedder ? 'hybrid' : 'bm25',
          held,
          batch,
          mode,
          runs,
          rawMsPerUpdate: per(rawMs),
          cairnMsPerUpdate: per(cairnMs),
          ratio: Math.round((cairnMs / Math.max(rawMs, 1e-6)) * 10) / 10,
          split: mid.split ? (Object.fromEntries(Object.entries(mid.split).map(([k, v]) => [k, per(v)])) as unknown as Split) : null,
        })
      }
      const contents = (d: Y.Doc) => JSON.stringify(Object.entries(d.getMap('observations').toJSON()).sort(([x], [y]) => (x < y ? -1 : 1)))
      if (contents(raw) !== contents(doc)) {
        throw new Error('the plain and the bound document disagree after the same updates')
      }
      raw.destroy()
    } finally {
      binding.stop()
      await memory.close()
    }
  }
  return rows
}
