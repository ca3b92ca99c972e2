// A first run as a new person meets it: one sentence of what Cairn is, a memory with sensible
// defaults in one click, the settings folded; and "waiting" said only with what it waits for.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startSyncServer, type SyncServer } from '../../src/server/sync-server'
import { startHarness, type Harness } from './harness'
import { capture, connectToServer, openMemoryMenu, openMemorySettings } from './ui'

describe('first run', () => {
  let harness: Harness
  let server: SyncServer | undefined
  let dataDir: string

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'cairn-e2e-first-'))
    harness = await startHarness()
  })
  afterAll(async () => {
    await harness?.close()
    await server?.close()
    rmSync(dataDir, { recursive: true, force: true })
  })

  it('says what Cairn is, makes a memory in one click, and keeps the settings folded', async () => {
    const page = await harness.openApp('/')
    const intro = page.getByTestId('first-run')
    await intro.waitFor()
    expect(await intro.textContent()).toContain('Cairn keeps what you and your AI agents learn')
    // visibility and retrieval are folded, their defaults said on the fold
    expect(await page.getByLabel('Visibility').isVisible()).toBe(false)
    expect(await page.getByLabel('Words only (BM25, no model)').isVisible()).toBe(false)
    expect(await page.locator('details.advanced summary').textContent()).toContain('private, meaning and words')
    await harness.screenshot(page, 'first-run')
    await openMemorySettings(page)
    expect(await page.getByLabel('Visibility').isVisible()).toBe(true)

    await page.getByRole('button', { name: 'Create my memory' }).click()
    await page.getByRole('heading', { name: 'Capture an observation' }).waitFor()
    expect(await page.getByTestId('memory-name').textContent()).toBe('My memory')
    expect(await page.getByTestId('memory-retrieval').textContent()).toContain('(100d')

    // no server: changes wait for nothing, so none is said to be waiting
    await capture(page, 'First', 'Amara is on call.', [{ name: 'Amara Okafor', type: 'person', description: 'Cardiologist at the city clinic' }])
    await capture(page, 'Second', 'Tomas covers nights.', [{ name: 'Tomas Berg', type: 'person', description: 'Radiologist who reads the scans' }])
    await openMemoryMenu(page)
    expect(await page.getByTestId('sync-state').textContent()).toBe('Not synced (this device only)')
    expect(await page.getByTestId('sync-pending').count()).toBe(0)
    expect(await page.getByTestId('sync-panel').textContent()).not.toContain('waiting')
    await harness.screenshot(page, 'first-run-local-only')

    // with a server that stops answering, the changes wait for it, and say so
    server = await startSyncServer({ host: '127.0.0.1', port: 0, dataDir, log: () => undefined })
    const id = decodeURIComponent(/#\/m\/([^/]+)/.exec(page.url())![1]!)
    await connectToServer(page, server.url, server.tokens.add({ memoryId: id, tier: 'full', agent: 'owner' }).token)
    await server.close()
    server = undefined
    await expect.poll(() => page.getByTestId('sync-state').textContent(), { timeout: 15_000 }).not.toBe('Synced')
    await capture(page, 'Third', 'Lena takes the scans.', [{ name: 'Lena Fischer', type: 'person', description: 'Radiographer who takes the scans' }])
    await openMemoryMenu(page)
    await expect.poll(async () => (await page.getByTestId('sync-pending').textContent())?.replace(/^\s*·\s*/, ''), { timeout: 10_000 }).toMatch(/^1 change waiting for the server$/)
    await harness.screenshot(page, 'first-run-server-gone')
  })
})
