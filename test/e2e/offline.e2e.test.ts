// The installed app without a network: after one online visit the service worker has
// precached the shell, the wasm runtime and the model, so a reload with the network off
// still loads, recalls by meaning and captures new observations.
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import type { Page } from 'playwright-core'
import { startHarness, type Harness } from './harness'
import { capture, createMemory, recall } from './ui'

describe('Cairn offline, after one visit', () => {
  let harness: Harness
  let page: Page
  // what the server answers ahead of the build: a new deployment of /sw.js goes here, so the
  // build the other files share is never edited
  const deployed: Record<string, string> = {}

  beforeAll(async () => {
    harness = await startHarness({ files: deployed })
    page = await harness.openApp('/')
  })
  afterAll(async () => {
    await harness?.close()
  })

  it('installs a service worker that takes control of the page', async () => {
    // controller is set once the worker has activated, i.e. after its precache install finished
    await page.waitForFunction(() => navigator.serviceWorker.controller !== null, undefined, { timeout: 30_000 })
    const cached = await page.evaluate(async () => {
      const urls: string[] = []
      for (const name of await caches.keys()) {
        for (const req of await (await caches.open(name)).keys()) urls.push(new URL(req.url).pathname)
      }
      return urls
    })
    expect(cached).toEqual(expect.arrayContaining(['/index.html', '/ort/ort-wasm-simd-threaded.wasm', '/models/cairn-glove-100d.onnx', '/manifest.webmanifest']))
    expect(cached.some((p) => /^\/assets\/engine\.worker-.*\.js$/.test(p))).toBe(true)
    // chunks loaded only when their screen opens are precached too, so they open offline
    expect(cached.some((p) => /^\/assets\/scene-.*\.js$/.test(p))).toBe(true)
    expect(cached.some((p) => /^\/assets\/layout\.worker-.*\.js$/.test(p))).toBe(true)
  })

  it('links an installable manifest with 192 and 512 px icons, one maskable', async () => {
    const manifest = await page.evaluate(async () => {
      const link = document.querySelector<HTMLLinkElement>('link[rel="manifest"]')
      return link ? ((await (await fetch(link.href)).json()) as { name: string; display: string; icons: { sizes: string; purpose?: string }[] }) : undefined
    })
    expect(manifest?.name).toBe('Cairn')
    expect(manifest?.display).toBe('standalone')
    const sizes = manifest?.icons.map((i) => i.sizes) ?? []
    expect(sizes).toEqual(expect.arrayContaining(['192x192', '512x512']))
    expect(manifest?.icons.some((i) => i.purpose === 'maskable')).toBe(true)
  })

  it('shows storage usage in the header', async () => {
    const status = page.getByTestId('storage-status')
    await status.waitFor()
    expect(await status.textContent()).toMatch(/^\s*\d+(\.\d)? [kMGT]?B of \d+(\.\d)? [kMGT]?B/)
    // the precache (wasm runtime + model, ~20 MB) counts once the worker has taken control
    await expect.poll(() => status.textContent()).toMatch(/^\s*\d+(\.\d)? MB of/)
    // asked for persistent storage once, and remembered that it did
    expect(await page.evaluate(() => localStorage.getItem('cairn.storage.persist-asked'))).not.toBeNull()
  })

  it('creates a memory and captures an observation online', async () => {
    await createMemory(page, 'Field notes')
    const slug = await capture(page, 'Harbor clinic', 'Ines Duarte runs the harbor clinic and sees fishermen after the night shift.', [{
      name: 'Ines Duarte',
      type: 'person',
      description: 'physician at the harbor clinic',
    }])
    expect(slug).toMatch(/^harbor-clinic/)
  })

  it('offers a waiting new version with a Reload banner, and reloading activates it', async () => {
    // a byte-different sw.js is what a new deployment looks like to the browser. It stays
    // deployed for the rest of the file: the browser checks for updates on every navigation,
    // even with the page offline, and finding the old bytes again would install them and show
    // the banner at a moment no step waits for, moving the links a later click aims at
    const original = await readFile(join(inject('distDir'), 'sw.js'), 'utf8')
    deployed['/sw.js'] = `${original}\n// next version\n`
    await page.evaluate(async () => (await navigator.serviceWorker.getRegistration())?.update())
    const banner = page.getByTestId('update-prompt')
    await banner.waitFor()
    expect(await banner.getAttribute('role')).toBe('status')
    expect(await banner.textContent()).toContain('A new version is ready')
    // the new worker waits: the page stays on the old one until the person reloads
    expect(await page.evaluate(async () => Boolean((await navigator.serviceWorker.getRegistration())?.waiting))).toBe(true)
    await harness.screenshot(page, 'offline-update-prompt')
    const reloaded = page.waitForEvent('framenavigated')
    await banner.getByRole('button', { name: 'Reload' }).click()
    await reloaded
    await page.waitForSelector('html[data-ready="true"]')
    await expect
      .poll(() => page.evaluate(async () => Boolean((await navigator.serviceWorker.getRegistration())?.waiting)))
      .toBe(false)
    expect(await page.getByTestId('update-prompt').count()).toBe(0)
  })

  it('reloads with the network off, served by the service worker', async () => {
    await harness.device.context.setOffline(true)
    // the network is really gone for the page: a resource outside the precache fails
    const errorsBefore = harness.pageErrors.length
    const direct = await page.evaluate(() => fetch('/not-precached.txt').then((r) => `status ${r.status}`, (e: unknown) => String(e)))
    expect(direct).toMatch(/Failed to fetch/)
    // that failure is logged as a console error on purpose; later steps must log none
    harness.pageErrors.splice(errorsBefore)
    await page.goto('/')
    await page.waitForSelector('html[data-ready="true"]')
    expect(await page.evaluate(() => navigator.onLine)).toBe(false)
    expect(await page.locator('.status').textContent()).toBe('Offline')
    expect(await page.evaluate(() => navigator.serviceWorker.controller !== null)).toBe(true)
    // the navigation's own update check runs in the background; awaiting one here shows that
    // it finds the version the page runs, so no banner can appear during the next steps
    const pending = await page.evaluate(async () => {
      const registration = await navigator.serviceWorker.getRegistration()
      await registration?.update()
      return { installing: Boolean(registration?.installing), waiting: Boolean(registration?.waiting) }
    })
    expect(pending).toEqual({ installing: false, waiting: false })
    expect(await page.getByTestId('update-prompt').count()).toBe(0)
  })

  it('recalls the observation offline, through the model and wasm from the cache', async () => {
    await page.getByTestId('memory-list').getByRole('link', { name: 'Field notes' }).click()
    // "doctor" shares no word with the entity, so the hit needs the embedder (model + wasm) to run
    const ranked = await recall(page, 'doctor')
    expect(ranked[0]).toBe('Ines Duarte')
    expect(await page.getByTestId('snippets').textContent()).toContain('Harbor clinic')
  })

  it('captures another observation offline and recalls it', async () => {
    const slug = await capture(page, 'Storm night', 'During the storm Ines Duarte crossed on the ferry Nordlys to the island.', [{
      name: 'Ferry Nordlys',
      type: 'vessel',
      description: 'passenger ferry between the cape and the mainland',
    }])
    expect(slug).toMatch(/^storm-night/)
    const ranked = await recall(page, 'ferry')
    expect(ranked).toContain('Ferry Nordlys')
    await harness.screenshot(page, 'offline-recall')
  })

  it('logs no page errors', () => {
    expect(harness.pageErrors).toEqual([])
  })
})
