// Organizations as people use them: the owner's profile makes an organization-visible memory
// and syncs it; two other browser profiles (fresh user-data-dirs) join the organization with
// their member credentials, see its memories, and read one read-only. Removing one member cuts
// that member off while the other reads on.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Page } from 'playwright-core'
import { startSyncServer, type SyncServer } from '../../src/server/sync-server'
import { startHarness, type Harness } from './harness'
import { capture, connectToServer, recall } from './ui'

async function recallUntil(page: Page, query: string, name: string): Promise<void> {
  await expect.poll(() => recall(page, query), { timeout: 15_000, interval: 300 }).toContain(name)
}

async function joinOrganization(page: Page, serverUrl: string, credential: string): Promise<void> {
  await page.getByLabel('Organization server').fill(serverUrl)
  await page.getByLabel('Member credential').fill(credential)
  await page.getByRole('button', { name: 'Show its memories' }).click()
}

describe('organizations in the browser', () => {
  let harness: Harness
  let server: SyncServer
  let dataDir: string

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'cairn-e2e-org-'))
    server = await startSyncServer({ host: '127.0.0.1', port: 0, dataDir, log: () => undefined })
    harness = await startHarness()
  })
  afterAll(async () => {
    await harness?.close()
    await server?.close()
    rmSync(dataDir, { recursive: true, force: true })
  })

  it('two members list and read an organization memory read-only; a removed member is cut off', async () => {
    const org = server.orgs.create('Acme clinic')
    const first = server.orgs.addMember(org.id, { kind: 'device', name: 'laptop' })
    const second = server.orgs.addMember(org.id, { kind: 'device', name: 'tablet' })

    const owner = await harness.openApp('/')
    await owner.getByLabel('Name', { exact: true }).fill('Clinic handbook')
    await owner.getByLabel('Words only (BM25, no model)').check()
    await owner.getByLabel('Visibility').selectOption('organization')
    await owner.getByLabel('Organization id').fill(org.id)
    await owner.getByRole('button', { name: 'Create memory' }).click()
    await owner.getByRole('heading', { name: 'Capture an observation' }).waitFor()
    const id = decodeURIComponent(/#\/m\/([^/]+)/.exec(owner.url())![1]!)
    await capture(owner, 'On call', 'Amara is on call this week.', [{ name: 'Amara Okafor', type: 'person', description: 'Cardiologist at the city clinic' }])
    // a private memory of the same owner, which no member may ever see
    await owner.goto('/')
    await owner.getByLabel('Name', { exact: true }).fill('Private diary')
    await owner.getByLabel('Words only (BM25, no model)').check()
    await owner.getByRole('button', { name: 'Create memory' }).click()
    await owner.getByRole('heading', { name: 'Capture an observation' }).waitFor()
    const privateId = decodeURIComponent(/#\/m\/([^/]+)/.exec(owner.url())![1]!)
    await connectToServer(owner, server.url, server.tokens.add({ memoryId: privateId, tier: 'full', agent: 'owner' }).token)
    await owner.goto(`/#/m/${encodeURIComponent(id)}/recall`)
    await connectToServer(owner, server.url, server.tokens.add({ memoryId: id, tier: 'full', agent: 'owner' }).token)
    await expect.poll(() => server.orgs.memories(org.id).map((m) => m.id), { timeout: 10_000 }).toEqual([id])

    const pages: Page[] = []
    for (const member of [first, second]) {
      const device = await harness.newIsolatedContext()
      const page = await device.openApp('/')
      pages.push(page)
      await joinOrganization(page, server.url, member.credential)
      const list = page.getByRole('list', { name: 'Organization memories' })
      await list.waitFor()
      expect(await list.locator('li strong').allTextContents()).toEqual(['Clinic handbook'])
      await page.getByRole('button', { name: 'Open Clinic handbook read-only' }).click()
      await recallUntil(page, 'cardiologist', 'Amara Okafor')
      // read-only: the write is refused on the device, naming the tier
      await page.getByRole('link', { name: 'Capture' }).click()
      await page.getByLabel('Title').fill('A member writes')
      await page.getByLabel('Note', { exact: true }).fill('Tomas joins the team.')
      await page.getByLabel('Title').press('Control+Enter')
      await expect.poll(() => page.getByRole('alert').first().textContent(), { timeout: 10_000 }).toContain('forbidden')
    }
    await harness.screenshot(pages[0]!, 'organization-member')

    // the owner's later notes reach both members
    await capture(owner, 'Night shift', 'Tomas covers the night shift.', [{ name: 'Tomas Berg', type: 'person', description: 'Radiologist who reads the scans' }])
    for (const page of pages) await recallUntil(page, 'radiologist', 'Tomas Berg')

    server.orgs.removeMember(org.id, second.member.id)
    const [stays, removed] = pages as [Page, Page]
    await removed.goto('/')
    await joinOrganization(removed, server.url, second.credential)
    await expect.poll(() => removed.getByRole('alert').first().textContent(), { timeout: 10_000 }).toContain('removed')
    await capture(owner, 'Rota', 'Amara and Tomas swap on Friday.', [{ name: 'Friday rota', type: 'event', description: 'Swap of shifts at the clinic' }])
    await recallUntil(stays, 'swap shifts', 'Friday rota')
  })
})
