// Organizations as people use them: the owner's profile makes an organization-visible memory
// and syncs it; two other browser profiles (fresh user-data-dirs) join the organization with
// their member credentials, see its memories, and read one read-only. Removing one member cuts
// that member off while the other reads on; the owner then makes the memory private from the
// app, which cuts the remaining member off and takes it out of the organization's listing.
import { describe, expect, it } from 'vitest'
import type { Page } from 'playwright-core'
import { recallUntil, serverAndBrowser } from './server-and-browser'
import { capture, connectToServer, openMemoryMenu, openMemorySettings, recall } from './ui'

async function joinOrganization(page: Page, serverUrl: string, credential: string): Promise<void> {
  await page.getByLabel('Organization server').fill(serverUrl)
  await page.getByLabel('Member credential').fill(credential)
  await page.getByRole('button', { name: 'Show its memories' }).click()
}

describe('organizations in the browser', () => {
  const env = serverAndBrowser('org')

  it('two members list and read an organization memory read-only; a removed member is cut off, the rest once the owner makes it private', async () => {
    const org = env.server.orgs.create('Acme clinic')
    const first = env.server.orgs.addMember(org.id, { kind: 'device', name: 'laptop' })
    const second = env.server.orgs.addMember(org.id, { kind: 'device', name: 'tablet' })

    const owner = await env.harness.openApp('/')
    await owner.getByLabel('Name', { exact: true }).fill('Clinic handbook')
    await openMemorySettings(owner)
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
    await openMemorySettings(owner)
    await owner.getByLabel('Words only (BM25, no model)').check()
    await owner.getByRole('button', { name: 'Create memory' }).click()
    await owner.getByRole('heading', { name: 'Capture an observation' }).waitFor()
    const privateId = decodeURIComponent(/#\/m\/([^/]+)/.exec(owner.url())![1]!)
    await connectToServer(owner, env.server.url, env.server.tokens.add({ memoryId: privateId, tier: 'full', agent: 'owner' }).token)
    await owner.goto(`/#/m/${encodeURIComponent(id)}/recall`)
    await connectToServer(owner, env.server.url, env.server.tokens.add({ memoryId: id, tier: 'full', agent: 'owner' }).token)
    await expect.poll(() => env.server.orgs.memories(org.id).map((m) => m.id), { timeout: 10_000 }).toEqual([id])
    // the organization accepts it into its listing (an administrator of the server does), once
    env.server.orgs.accept(org.id, id)

    const pages: Page[] = []
    for (const member of [first, second]) {
      const device = await env.harness.newIsolatedContext()
      const page = await device.openApp('/')
      pages.push(page)
      await joinOrganization(page, env.server.url, member.credential)
      const list = page.getByRole('list', { name: 'Organization memories' })
      await list.waitFor()
      expect(await list.locator('li strong').allTextContents()).toEqual(['Clinic handbook'])
      await page.getByRole('button', { name: 'Open Clinic handbook read-only' }).click()
      await recallUntil(page, 'cardiologist', 'Amara Okafor')
      // read-only: the copy says so and offers no capture (read-only.e2e.test.ts covers the rest)
      await page.getByTestId('read-only').waitFor()
      expect(await page.getByRole('navigation', { name: 'Memory' }).getByRole('link', { name: 'Capture' }).count()).toBe(0)
    }
    await env.harness.screenshot(pages[0]!, 'organization-member')

    // the owner's later notes reach both members
    await capture(owner, 'Night shift', 'Tomas covers the night shift.', [{ name: 'Tomas Berg', type: 'person', description: 'Radiologist who reads the scans' }])
    for (const page of pages) await recallUntil(page, 'radiologist', 'Tomas Berg')

    env.server.orgs.removeMember(org.id, second.member.id)
    const [stays, removed] = pages as [Page, Page]
    await removed.goto('/')
    await joinOrganization(removed, env.server.url, second.credential)
    await expect.poll(() => removed.getByRole('alert').first().textContent(), { timeout: 10_000 }).toContain('removed')
    await capture(owner, 'Rota', 'Amara and Tomas swap on Friday.', [{ name: 'Friday rota', type: 'event', description: 'Swap of shifts at the clinic' }])
    await recallUntil(stays, 'swap shifts', 'Friday rota')

    // a member's copy offers no visibility control: who may read it is the owner's choice
    await openMemoryMenu(stays)
    await stays.getByTestId('sync-panel').waitFor()
    expect(await stays.getByTestId('visibility-panel').count()).toBe(0)
    expect(await stays.getByTestId('sync-indicator').getAttribute('data-state')).toBe('online')

    // the owner makes the memory private from its menu
    await openMemoryMenu(owner)
    expect(await owner.getByTestId('visibility-current').textContent()).toContain(org.id)
    expect(await owner.getByLabel('Organization id').inputValue()).toBe(org.id)
    await owner.getByLabel('Visibility').selectOption('private')
    expect(await owner.getByLabel('Organization id').count()).toBe(0)
    await owner.getByRole('button', { name: 'Change visibility' }).click()
    await expect.poll(() => owner.getByTestId('visibility-result').textContent(), { timeout: 10_000 }).toContain('Private')
    await env.harness.screenshot(owner, 'organization-made-private')
    await expect.poll(() => env.server.orgs.memories(org.id).map((m) => m.id), { timeout: 10_000 }).toEqual([])
    // the member still reading is cut off at once, and the memory leaves the member's listing
    await expect.poll(() => stays.getByTestId('sync-indicator').getAttribute('data-state'), { timeout: 10_000 }).toBe('denied')
    expect(await stays.getByTestId('sync-panel').getByRole('alert').textContent()).toContain('no longer visible to your organization')
    await stays.goto('/')
    await joinOrganization(stays, env.server.url, first.credential)
    await stays.getByText('No memory is shared with this organization yet.').waitFor()
    expect(await stays.getByRole('list', { name: 'Organization memories' }).count()).toBe(0)

    // an organization id that is not one is refused with the engine's message, and nothing changes
    await owner.getByLabel('Visibility').selectOption('organization')
    await owner.getByLabel('Organization id').fill('not an id!')
    await owner.getByRole('button', { name: 'Change visibility' }).click()
    await expect.poll(() => owner.getByTestId('visibility-panel').getByRole('alert').textContent(), { timeout: 10_000 }).toContain('invalid_request')
    expect(await owner.getByTestId('visibility-current').textContent()).toContain('Private')
    expect(env.server.orgs.memories(org.id)).toEqual([])

    // and organization-visible again: the member lists it once more
    await owner.getByLabel('Organization id').fill(org.id)
    await owner.getByRole('button', { name: 'Change visibility' }).click()
    await expect.poll(() => owner.getByTestId('visibility-current').textContent(), { timeout: 10_000 }).toContain(org.id)
    await expect.poll(() => env.server.orgs.memories(org.id).map((m) => m.id), { timeout: 10_000 }).toEqual([id])
    await stays.getByRole('button', { name: 'Show its memories' }).click()
    await stays.getByRole('button', { name: 'Open Clinic handbook read-only' }).waitFor()
  })
})
