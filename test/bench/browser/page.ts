// The benchmark page: `window.cairnBench` runs each step in its own module worker, so the
// timed open starts with nothing in memory from the fill (only what the browser keeps on disk).
import * as Comlink from 'comlink'
import type { BenchApi, DocumentTimings, FilledMemory, RecallTimings } from './bench.worker'
import type { ObservationInput } from '../../../src/core/types'

async function inWorker<T>(run: (api: Comlink.Remote<BenchApi>) => Promise<T>): Promise<T> {
  const worker = new Worker(new URL('./bench.worker.ts', import.meta.url), { type: 'module', name: 'cairn-bench' })
  try {
    return await run(Comlink.wrap<BenchApi>(worker))
  } finally {
    worker.terminate()
  }
}

/** Inputs arrive in chunks (one message of 100k observations is too much for the driver), then fill takes them all. */
let staged: ObservationInput[] = []

const bench = {
  stage: (chunk: ObservationInput[]): number => staged.push(...chunk),
  fill: (name: string, hybrid: boolean): Promise<FilledMemory> => {
    const inputs = staged
    staged = []
    return inWorker((api) => api.fill(name, inputs, hybrid))
  },
  recall: (id: string, token: string, hybrid: boolean, queries: string[], writes: ObservationInput[]): Promise<RecallTimings> =>
    inWorker((api) => api.recall(id, token, hybrid, queries, writes)),
  syncDocument: (id: string, token: string, hybrid: boolean, queries: string[]): Promise<DocumentTimings> =>
    inWorker((api) => api.syncDocument(id, token, hybrid, queries)),
}

declare global {
  interface Window {
    cairnBench?: typeof bench
  }
}

window.cairnBench = bench
document.documentElement.dataset.ready = 'true'
