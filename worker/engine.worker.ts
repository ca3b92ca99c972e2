// The engine in a module Web Worker: the page talks to it through Comlink with the same API
// the library offers in-process. Memories use the shipped static model (public/models/) for
// hybrid recall; it is loaded once, on the first memory that needs it. The model's code is a
// dynamic import too, so the worker's first script stays small enough to answer the memory list soon.
import type * as Comlink from 'comlink'
import { exposeEngine, type EmbedderLoader } from '../src/engine/host'
import type { Embedder } from '../src/search/embedder'

let staticModel: Promise<Embedder> | undefined

const loadEmbedder: EmbedderLoader = async (id) => {
  staticModel ??= import('../src/search/static-embedder').then((m) => m.createStaticEmbedder())
  staticModel.catch(() => (staticModel = undefined))
  const embedder = await staticModel
  // Another id is a model this build does not ship: opening fails with config_locked, which names it.
  return embedder.id === id ? embedder : undefined
}

exposeEngine(self as unknown as Comlink.Endpoint, loadEmbedder)
