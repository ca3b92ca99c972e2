// Infrastructure probe run by the browser smoke test: proves that a module
// worker, Comlink, real IndexedDB through Dexie and the onnxruntime-web wasm
// backend all work together in the built app.
import * as Comlink from 'comlink'
import { Dexie, type EntityTable } from 'dexie'
import * as ort from 'onnxruntime-web/wasm'

interface ProbeRow {
  key: string
  value: string
}

type ProbeDb = Dexie & { rows: EntityTable<ProbeRow, 'key'> }

function openProbeDb(): ProbeDb {
  const db = new Dexie('cairn-smoke') as ProbeDb
  db.version(1).stores({ rows: 'key' })
  return db
}

/** The runtime files are copied to `ort/` under the base URL by vite.config.ts. */
function configureOrt(): void {
  ort.env.wasm.numThreads = 1
  ort.env.wasm.wasmPaths = new URL(`${import.meta.env.BASE_URL}ort/`, self.location.origin).href
}

const api = {
  /** What the worker sees of its environment. */
  environment(): { isWorker: boolean; hasIndexedDB: boolean; wasmPaths: string } {
    configureOrt()
    return {
      isWorker: typeof (self as { importScripts?: unknown }).importScripts === 'function',
      hasIndexedDB: typeof indexedDB !== 'undefined',
      wasmPaths: String(ort.env.wasm.wasmPaths),
    }
  },

  async writeRow(key: string, value: string): Promise<void> {
    const db = openProbeDb()
    try {
      await db.rows.put({ key, value })
    } finally {
      db.close()
    }
  },

  async readRow(key: string): Promise<string | undefined> {
    const db = openProbeDb()
    try {
      return (await db.rows.get(key))?.value
    } finally {
      db.close()
    }
  },

  /** Runs a model with float32 inputs of equal shape and returns every output. */
  async runModel(modelUrl: string, inputs: Record<string, number[]>): Promise<Record<string, number[]>> {
    configureOrt()
    const session = await ort.InferenceSession.create(modelUrl, { executionProviders: ['wasm'] })
    try {
      const feeds: Record<string, ort.Tensor> = {}
      for (const [name, values] of Object.entries(inputs)) {
        feeds[name] = new ort.Tensor('float32', Float32Array.from(values), [values.length])
      }
      const results = await session.run(feeds)
      const out: Record<string, number[]> = {}
      for (const [name, tensor] of Object.entries(results)) out[name] = Array.from(tensor.data as Float32Array)
      return out
    } finally {
      await session.release()
    }
  },
}

export type SmokeApi = typeof api

Comlink.expose(api)
