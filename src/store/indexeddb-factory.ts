// Which IndexedDB a memory is stored in, apart from the Dexie layout, so the public options
// types name no database class.
export interface IndexedDBFactory {
  /** Defaults to the global `indexedDB` (pass fake-indexeddb's in Node). */
  indexedDB?: IDBFactory
  IDBKeyRange?: typeof IDBKeyRange
}
