// The built app in a real browser: the shell mounts, and a module worker
// reached through Comlink uses real IndexedDB (Dexie) and runs an ONNX model
// with the onnxruntime-web wasm backend loaded from the served `ort/` files.
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { SMOKE_PAGE } from './global-setup'
import { startHarness, type Harness } from './harness'
import { addMulModel } from './tiny-model'

const MODEL_PATH = '/e2e/add-mul.onnx'
/** The probe's test page: the app does not ship `window.cairnSmoke`. */
const PROBE = `/${SMOKE_PAGE}`

describe('built app in Chromium', () => {
  let harness: Harness

  beforeAll(async () => {
    harness = await startHarness({ files: { [MODEL_PATH]: addMulModel() } })
  })
  afterAll(async () => {
    await harness?.close()
  })

  it('serves the shell with its manifest and mounts the Svelte app', async () => {
    const page = await harness.openApp()
    expect(await page.title()).toBe('Cairn')
    expect(await page.locator('header h1').textContent()).toBe('Cairn')
    await expect(page.locator('[data-testid="main"]').isVisible()).resolves.toBe(true)

    const manifestHref = await page.locator('link[rel="manifest"]').getAttribute('href')
    const manifest = await page.evaluate(async (href) => {
      const response = await fetch(href ?? '')
      return { type: response.headers.get('content-type'), body: await response.json() }
    }, manifestHref)
    expect(manifest.type).toContain('application/manifest+json')
    expect(manifest.body.name).toBe('Cairn')
    for (const icon of manifest.body.icons as { src: string }[]) {
      const status = await page.evaluate(async (src) => (await fetch(src)).status, icon.src)
      expect(status, icon.src).toBe(200)
    }
    await harness.screenshot(page, 'smoke-shell')
    await page.close()
  })

  it('reaches a module worker through Comlink', async () => {
    const page = await harness.openApp(PROBE)
    const env = await page.evaluate(() => window.cairnSmoke!.environment())
    expect(env).toEqual({ isWorker: true, hasIndexedDB: true, wasmPaths: `${harness.baseUrl}ort/` })
    await page.close()
  })

  it('keeps a Dexie row in real IndexedDB across reloads, per browser profile', async () => {
    const value = randomUUID()
    const page = await harness.openApp(PROBE)
    await page.evaluate((v) => window.cairnSmoke!.writeRow('probe', v), value)
    expect(await page.evaluate(() => window.cairnSmoke!.readRow('probe'))).toBe(value)

    // A reload starts a new worker, so the row can only come from disk.
    await page.reload()
    await page.waitForSelector('html[data-ready="true"]')
    expect(await page.evaluate(() => window.cairnSmoke!.readRow('probe'))).toBe(value)
    await page.close()

    const other = await harness.newIsolatedContext()
    const otherPage = await other.openApp(PROBE)
    expect(await otherPage.evaluate(() => window.cairnSmoke!.readRow('probe'))).toBeUndefined()
    await other.close()
  })

  it('runs an ONNX model on the wasm backend inside the worker', async () => {
    const a = Array.from({ length: 5 }, () => Math.random() * 20 - 10)
    const b = Array.from({ length: 5 }, () => Math.random() * 20 - 10)
    const requested: string[] = []
    const track = (request: { url(): string }) => requested.push(new URL(request.url()).pathname)
    harness.device.context.on('request', track)
    const page = await harness.openApp(PROBE)
    const out = await page.evaluate(
      ([url, a, b]) => window.cairnSmoke!.runModel(url, { a, b }),
      [new URL(MODEL_PATH, harness.baseUrl).href, a, b] as const,
    )
    // Reference values in float32, the model's element type.
    const f = Math.fround
    expect(out.sum).toEqual(a.map((x, i) => f(f(x) + f(b[i]!))))
    expect(out.product).toEqual(a.map((x, i) => f(f(x) * f(b[i]!))))
    // The runtime came from the copied files, not from a hashed duplicate.
    expect(requested).toContain('/ort/ort-wasm-simd-threaded.wasm')
    expect(requested).toContain('/ort/ort-wasm-simd-threaded.mjs')
    harness.device.context.off('request', track)
    await page.close()
  })

  it('answers a missing model with 404 rather than the app shell', async () => {
    const response = await fetch(new URL('/models/missing.onnx', harness.baseUrl))
    expect(response.status).toBe(404)
    const shell = await fetch(new URL('/some/app/route', harness.baseUrl))
    expect(await shell.text()).toContain('<div id="app">')
  })

  it('logs no page errors', () => {
    expect(harness.pageErrors).toEqual([])
  })
})
