// The memory list read with IndexedDB alone, for the engine worker's first script: Dexie and the
// rest of the engine load after the list is answered. It reads the registry as RegistryDB
// (store/db.ts) lays it out: database `cairn`, table `memories` keyed by id. A device with no
// registry yet holds no memories, and this read does not create one (the first memory does).
import { MemoryError } from '../core/errors'
import type { MemoryInfo } from '../core/types'

/** RegistryDB's database and table; test/engine/registry-read.test.ts checks they agree. */
export const REGISTRY_DATABASE = 'cairn'
export const REGISTRY_TABLE = 'memories'

const failed = (what: string, err: DOMException | null): MemoryError =>
  new MemoryError('storage_failed', `the list of memories could not be read (${what}): ${err?.message ?? 'unknown error'}`, { reason: err?.name ?? 'unknown' })

export function readMemoryList(factory: IDBFactory = indexedDB): Promise<MemoryInfo[]> {
  return new Promise((resolve, reject) => {
    let absent = false
    let request: IDBOpenDBRequest
    try {
      request = factory.open(REGISTRY_DATABASE)
    } catch (err) {
      // no IndexedDB here at all (private modes of some browsers)
      reject(failed('open', err instanceof DOMException ? err : null))
      return
    }
    request.onupgradeneeded = () => {
      // no registry on this device: aborting leaves no empty database behind
      absent = true
      request.transaction?.abort()
    }
    request.onerror = (event) => {
      event.preventDefault()
      if (absent) resolve([])
      else reject(failed('open', request.error))
    }
    request.onsuccess = () => {
      const db = request.result
      // a schema change from another tab waits for no reader
      db.onversionchange = () => db.close()
      if (!db.objectStoreNames.contains(REGISTRY_TABLE)) {
        db.close()
        resolve([])
        return
      }
      const tx = db.transaction(REGISTRY_TABLE, 'readonly')
      const rows = tx.objectStore(REGISTRY_TABLE).getAll()
      tx.oncomplete = () => {
        db.close()
        resolve(rows.result as MemoryInfo[])
      }
      tx.onabort = () => {
        db.close()
        reject(failed('read', tx.error))
      }
    }
  })
}
