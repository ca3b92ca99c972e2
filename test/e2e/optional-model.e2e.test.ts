// A memory that ranks with the optional USE-lite model, chosen in the app: the build serves it
// beside the shipped model without precaching it; the memory fetches it once, into the model
// cache, and recalls with it after a reload with the network off.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Page } from 'playwright-core'
import { startHarness, type Harness } from './harness'
import { capture, openMemoryMenu, openMemorySettings, recall } from './ui'

const USE_LITE = 'use-lite-512@1'

/** Every URL path in the page's Cache Storage, by cache name. */
const cachedPaths = (page: Page): Promise<Record<string, string[]>> =>
  page.evaluate(async () => {
    const out: Record<string, string[]> = {}
    for (const name of await caches.keys()) out[name] = (await (await caches.open(name)).keys()).map((r) => new URL(r.url).pathname)
    return out
  })

describe('a memory ranked by the optional USE-lite model', () => {
  let harness: Harness
  let page: Page

  beforeAll(async () => {
    harness = await startHarness()
    page = await harness.openApp('/')
  })
  afterAll(async () => {
    await harness?.close()
  })

  it('offers the shipped model first and USE-lite beside it, which the precache leaves out', async () => {
    await page.waitForFunction(() => navigator.serviceWorker.controller !== null, undefined, { timeout: 30_000 })
    await openMemorySettings(page)
    const model = page.locator('select[name="model"]')
    // the list shows once the models' manifests are read
    const values = () => model.locator('option').evaluateAll((els) => els.map((e) => (e as HTMLOptionElement).value))
    await expect.poll(values).toEqual([expect.stringMatching(/^cairn-glove/), USE_LITE])
    const options = await values()
    // the default stays the shipped model
    expect(await model.inputValue()).toBe(options[0])
    const precached = Object.entries(await cachedPaths(page)).flatMap(([name, paths]) => (name.startsWith('workbox-precache') ? paths : []))
    expect(precached).toContain('/models/cairn-glove-100d.onnx')
    expect(precached.filter((p) => p.startsWith('/models/optional/'))).toEqual([])
  })

  it('creates a memory with USE-lite, which fetches the model once into the model cache', async () => {
    await page.getByLabel('Name', { exact: true }).fill('Questions')
    await page.locator('select[name="model"]').selectOption(USE_LITE)
    await page.getByRole('button', { name: 'Create memory' }).click()
    await page.getByRole('heading', { name: 'Capture an observation' }).waitFor()
    await capture(page, 'Harbor clinic', 'Ines Duarte runs the harbor clinic and sees fishermen after the night shift.', [
      { name: 'Ines Duarte', type: 'person', description: 'physician at the harbor clinic' },
    ])
    await capture(page, 'Ferry', 'The ferry Nordlys crosses to the island twice a day when the sea is calm.', [
      { name: 'Ferry Nordlys', type: 'vessel', description: 'passenger ferry between the cape and the mainland' },
    ])
    expect((await recall(page, 'who runs the clinic'))[0]).toBe('Ines Duarte')
    const cached = Object.values(await cachedPaths(page)).flat()
    expect(cached).toEqual(expect.arrayContaining(['/models/optional/cairn-use-lite.json', '/models/optional/cairn-use-lite.onnx']))
    await openMemoryMenu(page)
    expect(await page.getByTestId('memory-retrieval').textContent()).toContain(`${USE_LITE} (512d`)
  })

  it('recalls with it after a reload with the network off', async () => {
    await harness.device.context.setOffline(true)
    await page.goto('/')
    await page.waitForSelector('html[data-ready="true"]')
    expect(await page.evaluate(() => navigator.onLine)).toBe(false)
    await page.getByTestId('memory-list').getByRole('link', { name: 'Questions' }).click()
    expect((await recall(page, 'a boat to the island'))[0]).toBe('Ferry Nordlys')
    // offline, the list still offers the model this device has used
    await page.goto('/')
    await page.waitForSelector('html[data-ready="true"]')
    await openMemorySettings(page)
    await expect.poll(() => page.locator('select[name="model"]').locator('option').count()).toBe(2)
    await harness.device.context.setOffline(false)
  })

  it('logs no page errors', () => {
    // offline included: a model's manifest is then read from the cache without asking the network
    expect(harness.pageErrors).toEqual([])
  })
})
