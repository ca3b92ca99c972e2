// The sync document's log in rows of about a MiB: a rewrite cuts the document between structs
// in an order where no row waits on a later one, a load applies it a group of rows per task,
// and a memory bound for the first time writes its notes in pieces, without undoing a commit
// made between them.
import { describe, expect, it } from 'vitest'
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb'
import * as Y from 'yjs'
import { documentRows, loadMemoryDoc, ROW_BYTES } from '../../src/sync/doc-store'
import { createMemoryDoc } from '../../src/sync/memory-doc'
import { bindMemoryDoc } from '../../src/sync/doc-bridge'
import { MemoryDB } from '../../src/store/db'
import { ROOTS } from '../../src/sync/layout'
import { engineOf } from '../../src/internals'
import { fixture } from '../engine/fixture'
import { observation } from './fixture'

const text = (i: number) => `Harbour log ${i}. ${'Words about the harbour and its ships. '.repeat(6).trim()}`

/** Applies `rows` one per transaction to a new document, checking that none waits on a later one. */
function replay(rows: Uint8Array[]): Y.Doc {
  const doc = createMemoryDoc()
  for (const row of rows) {
    Y.applyUpdate(doc, row)
    expect(doc.store.pendingStructs).toBeNull()
  }
  return doc
}

function expectSameDocument(a: Y.Doc, b: Y.Doc): void {
  expect(Y.encodeStateVector(b)).toEqual(Y.encodeStateVector(a))
  for (const root of Object.values(ROOTS)) expect(b.getMap(root).toJSON()).toEqual(a.getMap(root).toJSON())
  expect(Y.equalDeleteSets(Y.createDeleteSetFromStructStore(a.store), Y.createDeleteSetFromStructStore(b.store))).toBe(true)
}

describe('a document rewritten in rows', () => {
  it('cuts one device\'s notes, edits and deletions into rows of about the size asked, which give back the same document', async () => {
    const doc = createMemoryDoc()
    const notes = doc.getMap('observations')
    for (let i = 0; i < 600; i++) doc.transact(() => notes.set(`n-${i}`, { title: `Note ${i}`, content: text(i) }))
    for (let i = 0; i < 600; i += 7) notes.set(`n-${i}`, { title: `Note ${i}, edited`, content: text(i + 1) })
    for (let i = 3; i < 600; i += 11) notes.delete(`n-${i}`)
    const rowBytes = 16 * 1024
    const rows = await documentRows(doc, rowBytes)
    expect(rows.length).toBeGreaterThan(10)
    // a row is cut once it reaches the size: it passes it by at most one note
    for (const row of rows) expect(row.byteLength).toBeLessThan(rowBytes + 1024)
    expectSameDocument(doc, replay(rows))
  })

  it('places a device\'s rows after the rows of another device they build on', async () => {
    const a = createMemoryDoc()
    const b = createMemoryDoc()
    const write = (doc: Y.Doc, from: number, to: number, what: string) => {
      for (let i = from; i < to; i++) doc.getMap('observations').set(`n-${i}`, { title: `${what} ${i}`, content: text(i) })
    }
    write(a, 0, 300, 'A wrote')
    Y.applyUpdate(b, Y.encodeStateAsUpdate(a))
    // B overwrites A's notes (each entry's left is then A's), then A overwrites B's
    write(b, 0, 200, 'B rewrote')
    Y.applyUpdate(a, Y.encodeStateAsUpdate(b))
    write(a, 100, 150, 'A rewrote again')
    const rows = await documentRows(a, 8 * 1024)
    expect(rows.length).toBeGreaterThan(5)
    expectSameDocument(a, replay(rows))
  })

  it('places rows in order however finely devices wrote over each other', async () => {
    // three devices, each writing over the others' notes between syncs, in a seeded order
    let seed = 7
    const random = (n: number) => ((seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0) >>> 16) % n
    const devices = [createMemoryDoc(), createMemoryDoc(), createMemoryDoc()]
    for (let round = 0; round < 60; round++) {
      const doc = devices[random(3)]!
      for (let w = 0; w < 1 + random(8); w++) {
        const key = `n-${random(40)}`
        if (random(6) === 0) doc.getMap('observations').delete(key)
        else doc.getMap('observations').set(key, { title: `round ${round}`, content: text(round * 10 + w) })
      }
      // now and then two devices sync
      const [a, b] = [devices[random(3)]!, devices[random(3)]!]
      if (a !== b) {
        Y.applyUpdate(b, Y.encodeStateAsUpdate(a, Y.encodeStateVector(b)))
        Y.applyUpdate(a, Y.encodeStateAsUpdate(b, Y.encodeStateVector(a)))
      }
    }
    for (const doc of devices) {
      const rows = await documentRows(doc, 2 * 1024)
      expect(rows.length).toBeGreaterThan(5)
      expectSameDocument(doc, replay(rows))
    }
  })
})

describe('the log at open', () => {
  it('rewrites a document stored whole, and many small rows, into rows of about ROW_BYTES, once', async () => {
    const db = new MemoryDB('doc-rows-open', { indexedDB: new IDBFactory(), IDBKeyRange })
    try {
      const source = createMemoryDoc()
      const notes = source.getMap('observations')
      // about 5 MiB in 70 writes, stored as one update: what a first sync from a server leaves
      for (let w = 0; w < 70; w++) {
        source.transact(() => {
          for (let i = 0; i < 200; i++) notes.set(`n-${w}-${i}`, { title: `Note ${w}.${i}`, content: text(w * 1000 + i) })
        })
      }
      await db.docUpdates.add({ update: Y.encodeStateAsUpdate(source) })
      const whole = (await db.docUpdates.toArray())[0]!.update.byteLength
      expect(whole).toBeGreaterThan(4 * ROW_BYTES)

      expectSameDocument(source, await loadMemoryDoc(db))
      const rewritten = await db.docUpdates.toArray()
      expect(rewritten.length).toBeGreaterThanOrEqual(Math.floor(whole / ROW_BYTES))
      for (const row of rewritten) expect(row.update.byteLength).toBeLessThan(ROW_BYTES + 64 * 1024)
      // rows of about ROW_BYTES are not rewritten again
      expectSameDocument(source, await loadMemoryDoc(db))
      expect((await db.docUpdates.toArray()).map((r) => r.seq)).toEqual(rewritten.map((r) => r.seq))

      // 70 small writes on top are rewritten with the rest
      const small: Uint8Array[] = []
      source.on('update', (u: Uint8Array) => small.push(u))
      for (let i = 0; i < 70; i++) notes.set(`later-${i}`, { title: `Later ${i}`, content: text(i) })
      await db.docUpdates.bulkAdd(small.map((update) => ({ update })))
      expectSameDocument(source, await loadMemoryDoc(db))
      expect((await db.docUpdates.toArray()).length).toBeLessThanOrEqual(rewritten.length + 1)
    } finally {
      db.close()
    }
  }, 60_000)
})

describe('a memory bound for the first time', () => {
  it('writes its notes into the document in pieces, and a commit made between them stays', async () => {
    const f = await fixture()
    const engine = engineOf(f.memory)
    const notes = Array.from({ length: 3000 }, (_, i) => observation(`bulk-${i}`, { content: text(i) }))
    expect(await engine.importObservations(notes, [])).toBe(3000)
    const doc = createMemoryDoc()
    let transactions = 0
    doc.on('afterTransaction', () => transactions++)
    // a note of the last piece, rewritten while the binding may still be writing the pieces before it
    const last = notes[notes.length - 1]!
    const bound = bindMemoryDoc(engine, doc)
    const edit = f.conn.update(last.slug, { title: 'Rewritten meanwhile' })
    const [binding] = await Promise.all([bound, edit])
    await binding.settled()
    expect(transactions).toBeGreaterThan(2)
    const entries = doc.getMap('observations')
    expect(entries.size).toBe(3000)
    expect((entries.get(last.slug) as { title: string }).title).toBe('Rewritten meanwhile')
    expect(engine.getObservation(last.slug).title).toBe('Rewritten meanwhile')
  }, 60_000)
})
