// Storage quota exceeded: with the origin's quota cut down to what it already uses (Chromium's
// Storage.overrideQuotaForOrigin), a large appendix file and then a run of observations are
// refused with MemoryError storage_failed / reason quota; nothing is half-written (rows still
// equal a re-derivation, files unchanged, refused writes absent), and once the quota is lifted
// writes work again and survive a reopen with sync.
import type { CDPSession, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { callWorker, startFaultBrowser, type FaultBrowser } from './browser'
import type { StoredState } from './page/state'
import { entityOf, prng } from './stream'

let browser: FaultBrowser
let page: Page
let cdp: CDPSession
let origin: string

beforeAll(async () => {
  browser = await startFaultBrowser()
  origin = new URL(browser.baseUrl).origin
})
afterAll(async () => {
  await browser?.close()
})

/** A new browser profile (its own quota bookkeeping) whose origin may store only `quota` bytes. */
async function deviceWithQuota(quota: number): Promise<void> {
  const device = await browser.newDevice()
  page = await device.openPage()
  cdp = await page.context().newCDPSession(page)
  // Chromium reads an origin's quota when its storage is first opened and trusts a cached
  // remainder afterwards, so the small quota is set before anything is stored
  await cdp.send('Storage.overrideQuotaForOrigin', { origin, quotaSize: quota })
}

type Outcome<T> = { value?: T; error?: { name?: string; code?: string; message?: string; details?: Record<string, unknown> } }
const call = <T>(method: string, ...args: unknown[]): Promise<Outcome<T>> =>
  page.evaluate(([m, a]) => window.cairnFaults!.call(m as never, ...(a as unknown[])), [method, args] as const) as Promise<Outcome<T>>

const ok = <T>(method: string, ...args: unknown[]): Promise<T> => callWorker<T>(page, method, ...args)

/** Room for the memory, a few notes and a small file, not for a 4 MB file or many long notes. */
const QUOTA = 1024 * 1024

// Chromium counts what is on disk, after compression: filler must not compress away
const rand = prng(4242)
const noise = (n: number) => Array.from({ length: n }, () => String.fromCharCode(97 + Math.floor(rand() * 26))).join('')

const note = (i: number, size = 1_500) => ({
  title: `Quota note ${i}`,
  content: `Quota note ${i}. ${noise(size)}`.slice(0, size),
  entities: [entityOf(i), entityOf(i + 1)],
  relationships: [{ source: entityOf(i).name, type: 'works_with', target: entityOf(i + 1).name }],
})

function expectQuotaError(r: Outcome<unknown>, what: string): void {
  expect(r.error, `${what} should have been refused`).toBeDefined()
  expect(r.error).toMatchObject({ name: 'MemoryError', code: 'storage_failed', details: { reason: 'quota' } })
  expect(r.error!.message).toMatch(/quota/)
}

describe('storage quota exceeded', () => {
  it('refuses with storage_failed/quota, writes nothing partially, and works again once space is back', async () => {
    await deviceWithQuota(QUOTA)
    await page.evaluate(() => window.cairnFaults!.start())
    const { id, token } = await ok<{ id: string; token: string }>('create', 'quota')
    const acked: string[] = []
    for (let i = 0; i < 5; i++) acked.push((await ok<{ slug: string }>('write', note(i))).slug)
    await ok('storeFile', { path: 'notes/small.txt', data: 'a small file', description: 'Fits easily' })
    await ok('settled')
    const before = await ok<StoredState>('readStored', id)

    const big = await call('storeFile', { path: 'sources/big.bin', data: noise(4 * 1024 * 1024), description: 'Too big for the quota' })
    expectQuotaError(big, 'a 4 MB file')
    const afterFile = await ok<StoredState>('readStored', id)
    expect(afterFile.files).toEqual(before.files)
    expect(afterFile.fileBytes).toEqual(before.fileBytes)
    expect(afterFile.observations).toEqual(before.observations)

    // observations until one is refused; the refused one must leave no trace
    let refused: Outcome<unknown> | undefined
    let refusedTitle = ''
    for (let i = 10; i < 400 && !refused; i++) {
      const r = await call<{ slug: string }>('write', note(i, 19_000))
      if (r.error) {
        refused = r
        refusedTitle = note(i).title
      } else acked.push(r.value!.slug)
    }
    expect(refused, 'no write was refused under the tiny quota').toBeDefined()
    expectQuotaError(refused!, 'an observation over the quota')
    const full = await ok<StoredState>('readStored', id)
    expect(full.observations.map((o) => o.slug)).toEqual([...acked].sort())
    expect(full.observations.some((o) => o.title === refusedTitle)).toBe(false)
    expect(full.rows).toBe(full.derived)
    expect(full.files).toEqual(before.files)
    expect(acked.length, 'the quota let no long note in at all').toBeGreaterThan(5)
    const engine = await ok<{ engine: string; derivedFromRows: string }>('engineMatchesStore')
    expect(engine.engine).toBe(engine.derivedFromRows)
    expectQuotaError(await call('write', note(600, 19_000)), 'another long observation')
    // reads still answer while storage is full
    expect(await ok<string[]>('recall', entityOf(0).description.split(' ')[3]!)).toContain(entityOf(0).name)

    // space is back: writes and files work again
    await cdp.send('Storage.overrideQuotaForOrigin', { origin })
    acked.push((await ok<{ slug: string }>('write', note(500))).slug)
    await ok('storeFile', { path: 'sources/big.bin', data: 'now it fits', description: 'Stored after the quota was lifted' })
    await ok('settled')
    await ok('close')

    // and a fresh worker, reopening with sync, has every acknowledged write, whole
    await page.evaluate(() => window.cairnFaults!.start())
    await ok('open', id, token)
    await ok('settled')
    const reopened = await ok<StoredState>('readStored', id)
    expect(reopened.observations.map((o) => o.slug)).toEqual([...acked].sort())
    expect(reopened.rows).toBe(reopened.derived)
    expect(reopened.files.map((f) => f.path)).toEqual(['notes/small.txt', 'sources/big.bin'])
    expect(reopened.docObservations).toEqual(reopened.observations)
    await ok('close')
    expect(browser.pageErrors).toEqual([])
  })

  it('maps the quota error on the other paths that store something too (a new agent connection)', async () => {
    await deviceWithQuota(QUOTA)
    await page.evaluate(() => window.cairnFaults!.start())
    await ok('create', 'quota elsewhere')
    for (let i = 0; i < 400; i++) if ((await call('write', note(i, 19_000))).error) break
    let refused: Outcome<unknown> | undefined
    for (let i = 0; i < 300 && !refused; i++) {
      const r = await call('connectAgent', `agent ${i} ${noise(180)}`)
      if (r.error) refused = r
    }
    expectQuotaError(refused ?? {}, 'a new agent connection')
    await cdp.send('Storage.overrideQuotaForOrigin', { origin })
  })
})
