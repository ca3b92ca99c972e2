// A read-only copy shows it: an organization member's device offers no Capture tab, no Edit or
// Delete on a note, no file storing or consolidation, and says why; the owner's offers all. Reaching the capture
// screen by its address gives the reason and the ways to read instead of a form that fails.
import { describe, expect, it } from 'vitest'
import type { Page } from 'playwright-core'
import { serverAndBrowser } from './server-and-browser'
import { capture, connectToServer, openMemorySettings, recall } from './ui'

const nav = (page: Page) => page.getByRole('navigation', { name: 'Memory' })

describe('a read-only memory in the browser', () => {
  const env = serverAndBrowser('readonly')

  it("an organization member's copy offers no capture or edit, and says why; the owner's offers both", async () => {
    const org = env.server.orgs.create('Acme clinic')
    const member = env.server.orgs.addMember(org.id, { kind: 'device', name: 'laptop' })

    const owner = await env.harness.openApp('/')
    await owner.getByLabel('Name', { exact: true }).fill('Clinic handbook')
    await openMemorySettings(owner)
    await owner.getByLabel('Words only (BM25, no model)').check()
    await owner.getByLabel('Visibility').selectOption('organization')
    await owner.getByLabel('Organization id').fill(org.id)
    await owner.getByRole('button', { name: 'Create memory' }).click()
    await owner.getByRole('heading', { name: 'Capture an observation' }).waitFor()
    const id = decodeURIComponent(/#\/m\/([^/]+)/.exec(owner.url())![1]!)
    const slug = await capture(owner, 'On call', 'Amara is on call this week.', [{ name: 'Amara Okafor', type: 'person', description: 'Cardiologist at the city clinic' }])
    await connectToServer(owner, env.server.url, env.server.tokens.add({ memoryId: id, tier: 'full', agent: 'owner' }).token)
    await expect.poll(() => env.server.orgs.memories(org.id).map((m) => m.id), { timeout: 10_000 }).toEqual([id])
    // the organization accepts it into its listing (an administrator of the server does)
    env.server.orgs.accept(org.id, id)

    // the owner: Capture in the navigation, Edit and Delete on the note, no read-only mark
    await owner.goto(`/#/m/${encodeURIComponent(id)}/observation/${encodeURIComponent(slug)}`)
    await owner.getByRole('button', { name: 'Edit' }).waitFor()
    expect(await owner.getByRole('button', { name: 'Delete' }).count()).toBe(1)
    expect(await nav(owner).getByRole('link', { name: 'Capture' }).count()).toBe(1)
    expect(await owner.getByTestId('read-only').count()).toBe(0)
    await owner.getByRole('link', { name: 'Files' }).click()
    await owner.getByRole('button', { name: 'Store file' }).waitFor()
    await owner.getByRole('link', { name: 'Consolidate' }).click()
    await owner.getByRole('button', { name: 'Run consolidation' }).waitFor()

    const device = await env.harness.newIsolatedContext()
    const page = await device.openApp('/')
    await page.getByLabel('Organization server').fill(env.server.url)
    await page.getByLabel('Member credential').fill(member.credential)
    await page.getByRole('button', { name: 'Show its memories' }).click()
    await page.getByRole('button', { name: 'Open Clinic handbook read-only' }).click()
    await expect.poll(() => recall(page, 'cardiologist'), { timeout: 15_000, interval: 300 }).toContain('Amara Okafor')

    // the header says read-only, with the reason; the navigation has no Capture
    const mark = page.getByTestId('read-only')
    await mark.waitFor()
    expect(await mark.textContent()).toContain('member of its organization')
    expect(await nav(page).getByRole('link', { name: 'Notes' }).count()).toBe(1)
    expect(await nav(page).getByRole('link', { name: 'Capture' }).count()).toBe(0)
    await env.harness.screenshot(page, 'read-only-member-recall')

    // a note offers no Edit or Delete, and says why
    await page.getByRole('link', { name: 'Notes' }).click()
    await page.getByRole('link', { name: 'On call' }).click()
    const why = page.getByTestId('edit-unavailable')
    await why.waitFor()
    expect(await why.textContent()).toContain('only its owner changes it')
    expect(await page.getByRole('button', { name: 'Edit' }).count()).toBe(0)
    expect(await page.getByRole('button', { name: 'Delete' }).count()).toBe(0)
    await env.harness.screenshot(page, 'read-only-member-note')

    // files and consolidation: what they would write is not offered, and the reason is given
    await page.getByRole('link', { name: 'Files' }).click()
    await page.getByTestId('files-read-only').waitFor()
    expect(await page.getByRole('button', { name: 'Store file' }).count()).toBe(0)
    await page.getByRole('link', { name: 'Consolidate' }).click()
    await page.getByTestId('consolidation-read-only').waitFor()
    expect(await page.getByRole('button', { name: 'Run consolidation' }).count()).toBe(0)

    // the memory menu offers no pairing of another device: that would hand on the owner's access
    await page.getByText('Memory ▾').click()
    await page.getByTestId('pair-blocked').waitFor()
    expect(await page.getByTestId('pair-blocked').textContent()).toContain('member of its organization')
    expect(await page.getByRole('button', { name: 'Open on another device' }).count()).toBe(0)
    await page.getByText('Memory ▾').click()

    // the capture screen by its address: the reason and where to read, no form to fill
    await page.goto(`/#/m/${encodeURIComponent(id)}/capture`)
    await page.getByTestId('read-only-reason').waitFor()
    expect(await page.getByTestId('read-only-reason').textContent()).toContain('member of its organization')
    expect(await page.getByLabel('Note', { exact: true }).count()).toBe(0)
    expect(await page.getByRole('link', { name: 'Recall from this memory' }).count()).toBe(1)
    await env.harness.screenshot(page, 'read-only-member-capture')
    expect(env.harness.pageErrors).toEqual([])
  })
})
