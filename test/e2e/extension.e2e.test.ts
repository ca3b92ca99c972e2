// The Manifest V3 example (examples/mv3-extension), built from the packed tarball by its own
// build script, loaded unpacked into Chromium: its page writes to a memory in the extension's
// IndexedDB and recalls with hybrid ranking, and the memory is still there in a new page.
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { chromium, type BrowserContext, type Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CHROMIUM_PATH } from './harness'

const repo = join(import.meta.dirname, '../..')

describe('the MV3 example extension', () => {
  let root: string
  let context: BrowserContext | undefined
  const errors: string[] = []

  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'cairn-mv3-test-'))
    // packs the repository (npm pack builds lib/) and bundles the example against the installed tarball
    execFileSync(process.execPath, [join(repo, 'examples/mv3-extension/build.mjs'), '--out', join(root, 'extension')], { cwd: repo, stdio: ['ignore', 'ignore', 'pipe'] })
  }, 300_000)
  afterAll(async () => {
    await context?.close()
    rmSync(root, { recursive: true, force: true })
  })

  async function openPopup(id: string): Promise<Page> {
    const page = await context!.newPage()
    page.on('pageerror', (e) => errors.push(e.message))
    await page.goto(`chrome-extension://${id}/memory.html`)
    await page.waitForSelector('body[data-ready="true"]', { timeout: 60_000 })
    return page
  }
  async function submit(page: Page, form: string, fields: Record<string, string>): Promise<unknown> {
    await page.locator('#result').evaluate((el) => (el.textContent = ''))
    for (const [name, value] of Object.entries(fields)) await page.locator(`#${form} [name="${name}"]`).fill(value)
    await page.locator(`#${form} button[type="submit"]`).click()
    await expect.poll(() => page.locator('#result').textContent()).not.toBe('')
    return JSON.parse((await page.locator('#result').textContent())!)
  }

  it('writes and recalls in the extension page, and keeps the memory', async () => {
    const extension = join(root, 'extension')
    expect(readdirSync(extension).sort()).toEqual(['manifest.json', 'memory.html', 'memory.js', 'models', 'ort'])
    // Debian's Chromium loads unpacked extensions in its (new) headless mode
    context = await chromium.launchPersistentContext(join(root, 'profile'), {
      executablePath: CHROMIUM_PATH,
      headless: true,
      args: [`--disable-extensions-except=${extension}`, `--load-extension=${extension}`],
    })
    const manager = await context.newPage()
    await manager.goto('chrome://extensions')
    // chrome://extensions may list the installed extensions; the id comes from the folder's path
    const id = await manager.evaluate(
      () =>
        new Promise<string | undefined>((done) => {
          const management = (globalThis as unknown as { chrome: { management: { getAll(cb: (all: Array<{ id: string; name: string }>) => void): void } } }).chrome.management
          management.getAll((all) => done(all.find((x) => x.name === 'Cairn memory (example)')?.id))
        }),
    )
    expect(id).toMatch(/^[a-p]{32}$/)

    const page = await openPopup(id!)
    expect(await page.locator('#status').textContent()).toBe('Ready: extension notes (cairn-glove-100d@1)')
    expect(await submit(page, 'write', { title: 'Ada', content: 'Ada wrote the notes on the engine.', entity: 'Ada Lovelace', type: 'person', description: 'Mathematician who wrote the first program' })).toEqual({ written: expect.stringMatching(/^ada-/) })
    expect(await submit(page, 'write', { title: 'Bread', content: 'A recipe for the weekend.', entity: 'Sourdough', type: 'food', description: 'Bread leavened with wild yeast' })).toEqual({ written: expect.stringMatching(/^bread-/) })
    // a refused write says why, with the engine's code
    expect(await submit(page, 'write', { title: 'Nameless', content: 'No entity.', entity: ' ', type: 'x', description: 'y' })).toMatchObject({ error: 'invalid_write' })
    const first = (await submit(page, 'recall', { query: 'the first programmer' })) as { entities: string[] }
    expect(first.entities[0]).toBe('Ada Lovelace')
    await page.close()

    // a new page of the extension opens the same memory from its IndexedDB
    const again = await openPopup(id!)
    const recalled = (await submit(again, 'recall', { query: 'wild yeast bread' })) as { entities: string[]; observations: string[] }
    expect(recalled.entities[0]).toBe('Sourdough')
    expect(recalled.observations).toContain('Bread')
    expect(errors).toEqual([])
  }, 180_000)
})
