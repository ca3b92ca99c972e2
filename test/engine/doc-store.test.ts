// The sync document's local log: an update that storage refuses (a full quota) is kept and saved
// once there is room again, instead of being reported as lost for as long as the memory is open.
import { describe, expect, it } from 'vitest'
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb'
import { loadMemoryDoc, persistMemoryDoc } from '../../src/sync/doc-store'
import { MemoryDB } from '../../src/store/db'

describe('the document log under a full quota', () => {
  it('reports the refused update until it is saved, then saves it with the ones after it', async () => {
    const db = new MemoryDB('doc-store-quota', { indexedDB: new IDBFactory(), IDBKeyRange })
    try {
      const doc = await loadMemoryDoc(db)
      const persistence = persistMemoryDoc(db, doc)
      const add = db.docUpdates.add.bind(db.docUpdates)
      db.docUpdates.add = (() => Promise.reject(Object.assign(new Error('quota'), { name: 'QuotaExceededError' }))) as never
      doc.getMap('observations').set('refused', { title: 'written while the disk was full' })
      await expect(persistence.flush()).rejects.toMatchObject({ code: 'storage_failed' })
      await expect(persistence.flush()).rejects.toMatchObject({ code: 'storage_failed' })

      db.docUpdates.add = add
      doc.getMap('observations').set('later', { title: 'written once there was room' })
      await persistence.flush()
      persistence.stop()

      const reloaded = await loadMemoryDoc(db)
      expect([...reloaded.getMap('observations').keys()].sort()).toEqual(['later', 'refused'])
    } finally {
      db.close()
    }
  })
})
