// What `Memory.create` and `Memory.open` take: their own module, so the published declarations
// of `Memory` reach these types without the open procedure's engine.
import type { RetrievalConfig, Visibility } from '../core/types'
import type { Embedder } from '../search/embedder'
import type { IndexedDBFactory } from '../store/indexeddb-factory'

export interface CreateMemoryOptions extends IndexedDBFactory {
  name: string
  visibility?: Visibility
  orgId?: string
  retrieval?: Partial<RetrievalConfig>
  /** The model that the retrieval config names; without one, recall ranks by BM25 alone. */
  embedder?: Embedder
  /**
   * The id of a memory that already exists on another device, to make this device's copy of
   * it (then `sync` fills it from the server). New memories get a fresh id.
   */
  id?: string
}

export interface OpenMemoryOptions extends IndexedDBFactory {
  embedder?: Embedder
}
