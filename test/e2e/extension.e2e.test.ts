// The Manifest V3 example (examples/mv3-extension), built from the packed tarball by its own
// build script, loaded unpacked into Chromium: its page writes to a memory in the extension's
// IndexedDB and recalls with hybrid ranking, and the memory is still there in a new page. Its
// background service worker opens the same memory with the same embedder, writes and recalls,
// and keeps it across a stop of the worker, a reload of the extension and a browser restart.
import { execFileSync } from 'node:child_process'
import { cpSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { chromium, type BrowserContext, type Page, type Worker } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CHROMIUM_PATH } from './harness'

const repo = join(import.meta.dirname, '../..')

describe('the MV3 example extension', () => {
  let root: string
  let context: BrowserContext | undefined
  let workerContext: BrowserContext | undefined
  const errors: string[] = []

  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'cairn-mv3-test-'))
    // packs the repository (npm pack builds lib/) and bundles the example against the installed tarball
    execFileSync(process.execPath, [join(repo, 'examples/mv3-extension/build.mjs'), '--out', join(root, 'extension')], { cwd: repo, stdio: ['ignore', 'ignore', 'pipe'] })
  }, 300_000)
  afterAll(async () => {
    await context?.close()
    await workerContext?.close()
    rmSync(root, { recursive: true, force: true })
  })

  async function openPopup(id: string, where: BrowserContext = context!): Promise<Page> {
    const page = await where.newPage()
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
    expect(readdirSync(extension).sort()).toEqual(['background.js', 'manifest.json', 'memory.html', 'memory.js', 'models', 'ort'])
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

  /** What the background worker answers to a message from the extension's page. */
  function ask(page: Page, message: Record<string, unknown>): Promise<any> {
    return page.evaluate((m) => (globalThis as unknown as { chrome: { runtime: { sendMessage(m: unknown): Promise<unknown> } } }).chrome.runtime.sendMessage({ to: 'cairn', ...m }), message)
  }
  /** Opens the worker's memory from inside it (the example leaves `cairnNotes` there for its console): the run's start, or the error. */
  function openInWorker(worker: Worker): Promise<{ started: number; error?: { code?: string; message: string } }> {
    return worker.evaluate(async () => {
      const started = performance.timeOrigin
      try {
        await (self as unknown as { cairnNotes(): Promise<unknown> }).cairnNotes()
        return { started }
      } catch (e) {
        return { started, error: { code: (e as { code?: string }).code, message: (e as Error).message } }
      }
    })
  }

  it('opens the same hybrid memory in the background worker: writes and recalls there, and keeps it across a stop, a reload and a restart', async () => {
    const extension = join(root, 'extension-worker')
    cpSync(join(root, 'extension'), extension, { recursive: true })
    // first without the runtime's wasm where the worker looks for it
    const wasm = join(extension, 'ort/ort-wasm-simd-threaded.wasm')
    renameSync(wasm, `${wasm}.away`)
    workerContext = await chromium.launchPersistentContext(join(root, 'profile-worker'), {
      executablePath: CHROMIUM_PATH,
      headless: true,
      args: [`--disable-extensions-except=${extension}`, `--load-extension=${extension}`],
    })
    const firstWorker = workerContext.serviceWorkers()[0] ?? (await workerContext.waitForEvent('serviceworker'))
    const id = new URL(firstWorker.url()).host

    // the error names what is missing, not the model
    const failed = await openInWorker(firstWorker)
    expect(failed.error?.code).toBe('model_failed')
    expect(failed.error?.message).toContain(`chrome-extension://${id}/ort/ort-wasm-simd-threaded.wasm`)
    expect(failed.error?.message).not.toMatch(/build:model|[Rr]egenerate/)
    // once it is there, the same run of the worker opens the memory: nothing stayed broken
    renameSync(`${wasm}.away`, wasm)
    const retried = await openInWorker(firstWorker)
    expect(retried).toEqual({ started: failed.started })

    // the page writes, the worker recalls it (words and vectors); the worker writes, the page recalls it
    const page = await openPopup(id, workerContext)
    const status = await ask(page, { op: 'status' })
    expect(status.ready).toBe('extension notes (cairn-glove-100d@1)')
    expect(await submit(page, 'write', { title: 'Ada', content: 'Ada wrote the notes on the engine.', entity: 'Ada Lovelace', type: 'person', description: 'Mathematician who wrote the first program' })).toEqual({ written: expect.stringMatching(/^ada-/) })
    // each context holds the memory live; the other's write reaches it shortly after
    await expect.poll(async () => (await ask(page, { op: 'recall', query: 'the first programmer' })).entities[0], { timeout: 10_000 }).toBe('Ada Lovelace')
    const note = { title: 'Bread', content: 'A recipe for the weekend.', entity: 'Sourdough', type: 'food', description: 'Bread leavened with wild yeast' }
    expect(await ask(page, { op: 'write', note })).toEqual({ written: expect.stringMatching(/^bread-/) })
    expect(await ask(page, { op: 'write', note: { ...note, entity: ' ' } })).toMatchObject({ error: 'invalid_write' })
    await expect.poll(async () => ((await submit(page, 'recall', { query: 'wild yeast bread' })) as { entities: string[] }).entities[0], { timeout: 10_000 }).toBe('Sourdough')

    // the worker stopped (as Chrome stops an idle one) starts again on the next message, memory intact
    const cdp = await workerContext.newCDPSession(page)
    await cdp.send('ServiceWorker.enable')
    await cdp.send('ServiceWorker.stopAllWorkers')
    const restarted = await ask(page, { op: 'status' })
    expect(restarted.started).not.toBe(status.started)
    expect(restarted.ready).toBe(status.ready)
    const afterStop = await ask(page, { op: 'recall', query: 'the first programmer' })
    expect(afterStop.entities[0]).toBe('Ada Lovelace')
    expect((await ask(page, { op: 'recall', query: 'wild yeast bread' })).observations).toContain('Bread')

    // chrome.runtime.reload(): the extension unloads and loads again. Loaded from the command
    // line, headless Chromium leaves it disabled after the reload; it is switched back on as
    // in chrome://extensions
    const worker = workerContext.serviceWorkers().find((w) => w.url().includes(id))!
    await worker.evaluate(() => (globalThis as unknown as { chrome: { runtime: { reload(): void } } }).chrome.runtime.reload()).catch(() => undefined)
    const manager = await workerContext.newPage()
    await manager.goto('chrome://extensions')
    type Management = { management: { get(id: string, cb: (e: { enabled: boolean }) => void): void; setEnabled(id: string, on: boolean, cb: () => void): void } }
    const enabled = () => manager.evaluate((id) => new Promise<boolean>((done) => (globalThis as unknown as { chrome: Management }).chrome.management.get(id, (e) => done(e.enabled))), id)
    await expect.poll(enabled).toBe(false)
    await manager.evaluate((id) => new Promise<void>((done) => (globalThis as unknown as { chrome: Management }).chrome.management.setEnabled(id, true, done)), id)
    expect(await enabled()).toBe(true)
    const reloaded = await openPopup(id, workerContext)
    const again = await ask(reloaded, { op: 'status' })
    expect(again.ready).toBe(status.ready)
    expect(again.started).not.toBe(restarted.started)
    const recalled = await ask(reloaded, { op: 'recall', query: 'the first programmer' })
    expect(recalled.entities[0]).toBe('Ada Lovelace')
    expect((await ask(reloaded, { op: 'recall', query: 'wild yeast bread' })).entities[0]).toBe('Sourdough')

    // and after the browser restarts with the same profile
    await workerContext.close()
    workerContext = await chromium.launchPersistentContext(join(root, 'profile-worker'), {
      executablePath: CHROMIUM_PATH,
      headless: true,
      args: [`--disable-extensions-except=${extension}`, `--load-extension=${extension}`],
    })
    const afterRestart = await openPopup(id, workerContext)
    expect((await ask(afterRestart, { op: 'recall', query: 'the first programmer' })).entities[0]).toBe('Ada Lovelace')
    expect(((await submit(afterRestart, 'recall', { query: 'wild yeast bread' })) as { entities: string[] }).entities[0]).toBe('Sourdough')
    expect(errors).toEqual([])
  }, 240_000)

  it('names the Content-Security-Policy when the manifest does not let the worker compile WebAssembly', async () => {
    const extension = join(root, 'extension-strict')
    cpSync(join(root, 'extension'), extension, { recursive: true })
    const manifest = JSON.parse(readFileSync(join(extension, 'manifest.json'), 'utf8'))
    manifest.content_security_policy.extension_pages = "script-src 'self'; object-src 'self'"
    writeFileSync(join(extension, 'manifest.json'), JSON.stringify(manifest))
    const strict = await chromium.launchPersistentContext(join(root, 'profile-strict'), {
      executablePath: CHROMIUM_PATH,
      headless: true,
      args: [`--disable-extensions-except=${extension}`, `--load-extension=${extension}`],
    })
    try {
      const worker = strict.serviceWorkers()[0] ?? (await strict.waitForEvent('serviceworker'))
      const failed = await openInWorker(worker)
      expect(failed.error?.code).toBe('model_failed')
      expect(failed.error?.message).toContain("'wasm-unsafe-eval'")
      expect(failed.error?.message).not.toMatch(/build:model|[Rr]egenerate/)
    } finally {
      await strict.close()
    }
  }, 60_000)
})
