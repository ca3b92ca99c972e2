// The worker is terminated in the middle of a large import, written in many transactions (see
// store/import-pieces). The next open takes the unfinished import out again: the memory is as it
// was before it, rows and graph agree, the sync document never held it, and the same import then
// goes through whole.
import { describe, expect, it } from 'vitest'
import { onePageForFile } from './browser'
import type { StoredState } from './page/state'

const fault = onePageForFile()
const call = fault.call

const IMPORTED = 3_000

describe('worker terminated in the middle of a large import', () => {
  it('leaves the memory as before the import once it is opened again, and takes the import whole after', async () => {
    await fault.page().evaluate(() => window.cairnFaults!.start())
    const { id, token } = await call<{ id: string; token: string }>('create', 'import kill')
    for (const title of ['First', 'Second', 'Third']) await call('write', { title, content: `${title} note before the import.`, entities: [{ name: 'Lighthouse', type: 'place', description: 'the old lighthouse' }] })
    await call('settled')
    const before = await call<StoredState>('readStored', id)
    expect(before.observations).toHaveLength(3)

    // the import runs in the worker; the page watches its pieces land and kills the worker mid-way
    const killedAt = await fault.page().evaluate(
      async ([memoryId, count]) => {
        const f = window.cairnFaults!
        void f.call('importNotes' as never, count, 'bulk')
        for (let i = 0; i < 2_000; i++) {
          const r = (await f.call('importProgress' as never, memoryId)) as { value?: { observations: number; pending: boolean } }
          if (r.value?.pending && r.value.observations > 3 + count / 4) {
            f.kill()
            return r.value
          }
          await new Promise((res) => setTimeout(res, 5))
        }
        return undefined
      },
      [id, IMPORTED] as const,
    )
    // killed with part of the import on disk and its commit not yet made
    expect(killedAt?.pending).toBe(true)
    expect(killedAt!.observations).toBeGreaterThan(3)

    await fault.page().evaluate(() => window.cairnFaults!.start())
    const onDisk = await call<{ observations: number; pending: boolean }>('importProgress', id)
    expect(onDisk.pending).toBe(true)
    expect(onDisk.observations).toBeGreaterThan(3)

    // opened as the app does: the unfinished import is taken out, and the document never had it
    await call('open', id, token)
    await call('settled')
    const reopened = await call<StoredState>('readStored', id)
    expect(reopened.observations).toEqual(before.observations)
    expect(reopened.rows).toBe(reopened.derived)
    expect(reopened.rows).toBe(before.rows)
    expect(reopened.docObservations).toEqual(before.observations)
    expect(await call<{ observations: number; pending: boolean }>('importProgress', id)).toEqual({ observations: 3, pending: false })
    const matches = await call<{ engine: string; derivedFromRows: string; observations: number }>('engineMatchesStore')
    expect(matches.engine).toBe(matches.derivedFromRows)
    expect(matches.observations).toBe(3)
    expect(await call<string[]>('recall', 'old lighthouse')).toContain('Lighthouse')

    // the same import, not interrupted, commits whole
    expect(await call<number>('importNotes', IMPORTED, 'bulk')).toBe(IMPORTED)
    await call('settled')
    const after = await call<StoredState>('readStored', id)
    expect(after.observations).toHaveLength(3 + IMPORTED)
    expect(after.rows).toBe(after.derived)
    expect(after.docObservations).toHaveLength(3 + IMPORTED)
    expect(await call<{ observations: number; pending: boolean }>('importProgress', id)).toEqual({ observations: 3 + IMPORTED, pending: false })
    expect(await call<string[]>('recall', 'harbour number 7')).toContain('Harbour 7')
    await call('close')
    expect(fault.pageErrors()).toEqual([])
  })
})
