// A large import is written in transactions under Chromium's undo-log size (see
// store/import-pieces): all of it commits, or the memory is left as it was, whether the import
// fails while it is written or the tab dies before its last transaction.
import { afterEach, describe, expect, it, vi } from 'vitest'
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb'
import fc from 'fast-check'
import { DERIVATION_RULES, Graph } from '../../src/core/graph'
import { graphFingerprint } from '../helpers/graph-fingerprint'
import { validateObservationInput } from '../../src/core/contract'
import type { Observation, ObservationInput } from '../../src/core/types'
import { createMemory, openMemory } from '../../src/index'
import { engineOf } from '../../src/internals'
import type { MemoryDB } from '../../src/store/db'
import { readDerived } from '../helpers/read-derived'
import { DERIVATION_KEY, IMPORT_PENDING_KEY, observationBytes, PIECE_BYTES, piecesOf } from '../../src/store/import-pieces'
import { MemoryError } from '../../src/core/errors'

const at = '2026-01-02T00:00:00.000Z'
function note(slug: string, input: Partial<ObservationInput>): Observation {
  const { warnings: _, ...fields } = validateObservationInput({ title: slug, content: `about ${slug}`, ...input })
  return { slug, ...fields, observedAt: fields.observedAt ?? at, createdBy: 'import', createdAt: at, updatedAt: at }
}

/** Enough notes, of about 1.2 kB each, that an import of them takes several pieces. */
function manyNotes(n: number, prefix = 'n'): Observation[] {
  return Array.from({ length: n }, (_, i) =>
    note(`${prefix}-${i}`, {
      content: `Note ${i} of the import. ${'Words about the harbour and its ships. '.repeat(25)}`,
      entities: [
        { name: `Ship ${i % 97}`, type: 'vessel', description: `a ship seen in note ${i % 97}` },
        { name: `Harbour ${i % 13}`, type: 'place', description: `harbour number ${i % 13}` },
      ],
      relationships: [{ source: `Ship ${i % 97}`, type: 'docked_at', target: `Harbour ${i % 13}` }],
    }),
  )
}

async function setup() {
  const deps = { indexedDB: new IDBFactory(), IDBKeyRange }
  const memory = await createMemory({ name: 'import in pieces', ...deps })
  const conn = await memory.connect({ agent: 'owner', tier: 'full' })
  await conn.write({ title: 'before', content: 'The lighthouse keeper wrote before the import.', entities: [{ name: 'Lighthouse', type: 'place', description: 'the old lighthouse' }] })
  return { memory, conn, deps, reopen: () => openMemory(memory.info.id, deps) }
}

const rowsOf = async (memory: Awaited<ReturnType<typeof createMemory>>) => {
  const db = engineOf(memory).db
  return {
    slugs: (await db.observations.toCollection().primaryKeys()).sort(),
    journal: (await db.unmirrored.toCollection().primaryKeys()).sort(),
    pending: (await db.meta.get(IMPORT_PENDING_KEY))?.value,
    rules: (await db.meta.get(DERIVATION_KEY))?.value,
  }
}

afterEach(() => {
  vi.restoreAllMocks()
  delete (globalThis as { navigator?: unknown }).navigator
})

describe('pieces of an import', () => {
  it('are runs in order, each within the budget unless one row alone is larger', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: 500 })), fc.integer({ min: 1, max: 1000 }), (sizes, budget) => {
        const pieces = piecesOf(sizes, (n) => n, budget)
        expect(pieces.flat()).toEqual(sizes)
        for (const piece of pieces) {
          expect(piece.length).toBeGreaterThan(0)
          if (piece.length > 1) expect(piece.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(budget)
        }
        // a piece ends only where the next row would not have fit
        for (let i = 0; i + 1 < pieces.length; i++) expect(pieces[i]!.reduce((a, b) => a + b, 0) + pieces[i + 1]![0]!).toBeGreaterThan(budget)
      }),
    )
  })
})

describe('a large import, written in pieces', () => {
  it('commits whole: the rows, the journal and the derived rows agree with the graph, before and after a reopen', async () => {
    const f = await setup()
    const notes = manyNotes(600)
    expect(piecesOf(notes, observationBytes).length).toBeGreaterThan(2)
    const puts = vi.spyOn(engineOf(f.memory).db.observations, 'bulkPut')
    expect(await engineOf(f.memory).importObservations(notes, [])).toBe(600)
    // several transactions, none over the budget
    expect(puts.mock.calls.length).toBeGreaterThan(2)
    for (const [rows] of puts.mock.calls) expect(rows.reduce((s, o) => s + observationBytes(o), 0)).toBeLessThanOrEqual(PIECE_BYTES)
    const rows = await rowsOf(f.memory)
    expect(rows.slugs).toHaveLength(601)
    expect(rows.journal).toEqual(expect.arrayContaining(notes.map((o) => `observation:${o.slug}`)))
    expect(rows.pending).toBeUndefined()
    expect(rows.rules).toBe(DERIVATION_RULES)
    const graph = engineOf(f.memory).committedGraph
    const derived = await readDerived(engineOf(f.memory).db)
    expect(derived.entities.length).toBe(graph.entities.size)
    expect(derived.relationships.length).toBe(graph.relationships.size)
    expect(derived.entities.find((e) => e.key === 'ship 5')?.observations).toEqual(graph.entities.get('ship 5')?.observations)
    expect((await f.conn.recall({ query: 'harbour number 7' })).entities.map((e) => e.name)).toContain('Harbour 7')
    const fingerprint = graphFingerprint(graph)
    await f.memory.close()
    const again = await f.reopen()
    expect(graphFingerprint(engineOf(again).committedGraph)).toBe(fingerprint)
    // a second import replaces derived rows far more than a piece of them, a piece at a time
    expect(await engineOf(again).importObservations(manyNotes(600, 'm'), [])).toBe(600)
    const after = engineOf(again).committedGraph
    const rowsAfter = await readDerived(engineOf(again).db)
    expect(rowsAfter.entities.map((e) => [e.key, e.observations.length]).sort()).toEqual([...after.entities.values()].map((e) => [e.key, e.observations.length]).sort())
    expect(rowsAfter.relationships.map((r) => [r.key, r.observations.length]).sort()).toEqual([...after.relationships.values()].map((r) => [r.key, r.observations.length]).sort())
    expect((await rowsOf(again)).rules).toBe(DERIVATION_RULES)
    await again.close()
  })

  it('that fails partway is put back at once: nothing of it stays, the memory answers as before, and its reopen repairs the derived rows', async () => {
    const f = await setup()
    const before = graphFingerprint(engineOf(f.memory).committedGraph)
    const beforeRows = await rowsOf(f.memory)
    const puts = failThirdPiece(engineOf(f.memory).db)
    const failed = await engineOf(f.memory).importObservations(manyNotes(600), []).catch((e: unknown) => e)
    expect(failed).toBeInstanceOf(MemoryError)
    expect((failed as MemoryError).code).toBe('storage_failed')
    expect(puts.calls).toBe(3)
    expect(graphFingerprint(engineOf(f.memory).committedGraph)).toBe(before)
    const rows = await rowsOf(f.memory)
    expect(rows.slugs).toEqual(beforeRows.slugs)
    expect(rows.journal).toEqual(beforeRows.journal)
    expect(rows.pending).toBeUndefined()
    // the derived rows are rewritten by the next open
    expect(rows.rules).toBeUndefined()
    expect((await f.conn.recall({ query: 'harbour' })).entities.map((e) => e.name)).not.toContain('Harbour 7')
    await f.memory.close()
    const again = await f.reopen()
    expect(graphFingerprint(engineOf(again).committedGraph)).toBe(before)
    expect((await rowsOf(again)).rules).toBe(DERIVATION_RULES)
    const derived = await readDerived(engineOf(again).db)
    expect(derived.entities.map((e) => e.key)).toEqual(['lighthouse'])
    await again.close()
  })

  it('that is put back leaves the journal rows it replaced as they were: a deletion the sync document has yet to take stays', async () => {
    for (const rollbackFails of [false, true]) {
      const f = await setup()
      const db = engineOf(f.memory).db
      // n-5 was deleted here and the document has not taken the deletion yet; the import brings it back
      await db.unmirrored.put({ key: 'observation:n-5', stamp: 'earlier:7' })
      const beforeRows = await rowsOf(f.memory)
      failThirdPiece(db)
      // a tab that dies before it puts the import back leaves that to the next open
      if (rollbackFails) vi.spyOn(db.unmirrored, 'bulkDelete').mockImplementation((() => Promise.reject(new Error('the tab is gone'))) as unknown as typeof db.unmirrored.bulkDelete)
      expect(await engineOf(f.memory).importObservations(manyNotes(600), []).catch((e: unknown) => (e as MemoryError).code)).toBe('storage_failed')
      vi.restoreAllMocks()
      let memory = f.memory
      if (rollbackFails) {
        expect((await rowsOf(memory)).pending).toBeDefined()
        await memory.close()
        memory = await f.reopen()
      }
      const rows = await rowsOf(memory)
      expect(rows.slugs).toEqual(beforeRows.slugs)
      expect(rows.journal).toEqual(beforeRows.journal)
      expect(await engineOf(memory).db.unmirrored.get('observation:n-5')).toEqual({ key: 'observation:n-5', stamp: 'earlier:7' })
      await memory.close()
    }
  })

  /** Makes the third piece an import writes fail as a full disk would; counts the pieces tried. */
  function failThirdPiece(db: MemoryDB): { calls: number } {
    const table = db.observations
    const real = table.bulkPut.bind(table)
    const puts = { calls: 0 }
    vi.spyOn(table, 'bulkPut').mockImplementation(((rows: Observation[]) => {
      if (++puts.calls === 3) return Promise.reject(Object.assign(new Error('the disk is full'), { name: 'QuotaExceededError' }))
      return real(rows)
    }) as typeof table.bulkPut)
    return puts
  }

  /** A memory as a tab that died in the middle of a large import leaves it. */
  async function diedMidImport() {
    const f = await setup()
    const before = graphFingerprint(engineOf(f.memory).committedGraph)
    const beforeRows = await rowsOf(f.memory)
    const notes = manyNotes(300, 'lost')
    const db = engineOf(f.memory).db
    await db.meta.put({ key: IMPORT_PENDING_KEY, value: { slugs: notes.map((o) => o.slug), journal: notes.map((o) => `observation:${o.slug}`) } })
    await db.observations.bulkPut(notes.slice(0, 120))
    await db.unmirrored.bulkPut(notes.slice(0, 120).map((o) => ({ key: `observation:${o.slug}`, stamp: 'gone:1' })))
    await db.meta.delete(DERIVATION_KEY)
    await db.entities.clear()
    await f.memory.close()
    return { ...f, before, beforeRows, notes }
  }

  it('left unfinished by a tab that died is put back by the next open', async () => {
    const f = await diedMidImport()
    const again = await f.reopen()
    expect(graphFingerprint(engineOf(again).committedGraph)).toBe(f.before)
    const rows = await rowsOf(again)
    expect(rows.slugs).toEqual(f.beforeRows.slugs)
    expect(rows.journal).toEqual(f.beforeRows.journal)
    expect(rows.pending).toBeUndefined()
    expect(rows.rules).toBe(DERIVATION_RULES)
    expect((await readDerived(engineOf(again).db)).entities.map((e) => e.key)).toEqual(['lighthouse'])
    // and it takes the same import again, whole
    expect(await engineOf(again).importObservations(f.notes, [])).toBe(300)
    expect(graphFingerprint(engineOf(again).committedGraph)).toBe(graphFingerprint(Graph.derive(engineOf(again).committedGraph.allObservations())))
    await again.close()
  })

  it('still being written by another tab is left alone by an open, which does not show its notes', async () => {
    const f = await diedMidImport()
    const name = `cairn-import:${f.memory.info.id}`
    ;(globalThis as { navigator?: unknown }).navigator = { locks: { query: async () => ({ held: [{ name }] }), request: async (_n: string, fn: () => Promise<unknown>) => fn() } }
    const again = await openMemory(f.memory.info.id, f.deps)
    expect(graphFingerprint(engineOf(again).committedGraph)).toBe(f.before)
    const rows = await rowsOf(again)
    // the other tab's rows and marker are untouched, and the derived rows are not rewritten under it
    expect(rows.slugs).toHaveLength(f.beforeRows.slugs.length + 120)
    expect(rows.pending).toBeDefined()
    expect(rows.rules).toBeUndefined()
    await again.close()
  })
})
