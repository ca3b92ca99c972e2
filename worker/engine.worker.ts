// The engine in a module Web Worker: the page talks to it through Comlink with the same API
// the library offers in-process. Memories rank with the model their retrieval config names:
// the shipped static model (public/models/), or the optional USE-lite (models/optional/, built
// with the app). Each is loaded once, on the first memory that needs it. The models' code is a
// dynamic import too, so the worker's first script stays small enough to answer the memory list soon.
import type * as Comlink from 'comlink'
import { exposeEngine, type EmbedderLoader } from '../src/engine/host'
import type { Embedder } from '../src/search/embedder'
import { USE_LITE_ID } from '../src/search/use-lite-files'

const loading = new Map<string, Promise<Embedder>>()

/** Loads a model once; a failed load is tried again by the next memory that needs it. */
function once(key: string, load: () => Promise<Embedder>): Promise<Embedder> {
  let model = loading.get(key)
  if (!model) {
    model = load()
    loading.set(key, model)
    model.catch(() => loading.delete(key))
  }
  return model
}

const loadEmbedder: EmbedderLoader = async (id) => {
  if (id === USE_LITE_ID) {
    // Vite's base URL in the app; '/' where another bundler builds this worker
    const base = (import.meta as ImportMeta & { env?: { BASE_URL?: string } }).env?.BASE_URL ?? '/'
    const baseUrl = `${base}models/optional/`
    return once(id, () => import('../src/search/use-lite-embedder').then((m) => m.createUseLiteEmbedder({ baseUrl })))
  }
  const embedder = await once('static', () => import('../src/search/static-embedder').then((m) => m.createStaticEmbedder()))
  // Another id is a model this build does not ship: opening fails with config_locked, which names it.
  return embedder.id === id ? embedder : undefined
}

exposeEngine(self as unknown as Comlink.Endpoint, loadEmbedder)
