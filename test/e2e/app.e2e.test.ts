// The app as a new user drives it in Chromium: the engine runs in its worker with the shipped
// static model, data lives in real IndexedDB, and every step goes through the UI.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Page } from 'playwright-core'
import { startHarness, type Harness } from './harness'
import { capture, openFullForm, openMemorySettings, recall } from './ui'

describe('Cairn app, first use', () => {
  let harness: Harness
  let page: Page

  beforeAll(async () => {
    harness = await startHarness()
    page = await harness.openApp('/')
    page.on('dialog', (d) => void d.accept())
  })
  afterAll(async () => {
    await harness?.close()
  })

  it('creates a memory with the shipped model fixed in its retrieval config', async () => {
    await expect.poll(() => page.getByText('No memories yet').isVisible()).toBe(true)
    await harness.screenshot(page, 'app-memories-empty')
    await page.getByLabel('Name').fill('Clinic notes')
    await openMemorySettings(page)
    await page.getByLabel('Visibility').selectOption('private')
    await page.getByRole('button', { name: 'Create memory' }).click()
    await page.getByRole('heading', { name: 'Capture an observation' }).waitFor()
    expect(await page.getByTestId('memory-name').textContent()).toBe('Clinic notes')
    expect(await page.getByTestId('memory-retrieval').textContent()).toContain('cairn-glove-100d@1 (100d')
  })

  it('says in plain words what breaks the contract', async () => {
    await page.getByLabel('Title').fill('No description yet')
    await openFullForm(page)
    await page.getByTestId('entity-row').first().getByLabel('Name').fill('Amara Okafor')
    await page.getByLabel('Title').press('Control+Enter')
    const alert = page.getByRole('alert')
    await alert.waitFor()
    expect(await alert.textContent()).toMatch(/Amara Okafor[\s\S]*description/)
    expect(await alert.textContent()).not.toContain('entities[0]')
    await harness.screenshot(page, 'app-capture-error')
  })

  it('captures an observation with two entities and a relationship', async () => {
    await page.getByLabel('Note', { exact: true }).fill('x'.repeat(2_001))
    expect(await page.locator('#content-count').textContent()).toContain('2001 / 2000')
    const slug = await capture(
      page,
      'Met Amara at the rowing club',
      'Amara Okafor treats patients during the week and rows with the harbor club on Saturdays.',
      [
        { name: 'Amara Okafor', type: 'person', description: 'physician at the clinic' },
        { name: 'Harbor Rowing Club', type: 'organization', description: 'amateur sports team that trains on the lake' },
      ],
      ['Amara Okafor', 'member_of', 'Harbor Rowing Club'],
    )
    expect(slug).toMatch(/^met-amara-at-the-rowing-club/)
    const neighborhoods = await page.getByTestId('write-result').textContent()
    expect(neighborhoods).toContain('Harbor Rowing Club')
    await harness.screenshot(page, 'app-capture-result')
  })

  // BM25 alone returns no entity for this query (no shared word), so a hit can only come from the vectors.
  it('recalls by meaning: "doctor" is in no name or description', async () => {
    const ranked = await recall(page, 'doctor')
    expect(ranked[0]).toBe('Amara Okafor')
    expect((await page.getByTestId('recalled-relationships').allTextContents()).join(' ')).toContain('Amara Okafor member of Harbor Rowing Club')
    expect((await page.getByTestId('snippets').allTextContents()).join(' ')).toContain('Met Amara at the rowing club')
    await harness.screenshot(page, 'app-recall')
  })

  it('shows the entity page and edits a description, with a review hint', async () => {
    await page.getByTestId('recalled-entities').getByRole('link', { name: 'Amara Okafor', exact: true }).click()
    await page.getByTestId('entity-page').waitFor()
    expect(await page.getByTestId('entity-description').textContent()).toBe('physician at the clinic')
    expect(await page.getByTestId('entity-degree').textContent()).toBe('1')
    expect(await page.getByTestId('outgoing').textContent()).toContain('member of Harbor Rowing Club')
    await harness.screenshot(page, 'app-entity')

    await page.getByTestId('backing-observations').getByRole('link', { name: 'Met Amara at the rowing club' }).click()
    await page.getByTestId('observation').waitFor()
    await page.getByRole('button', { name: 'Edit' }).click()
    // the note's own description of her, corrected in the capture editor on the note
    await page.getByLabel('Description of Amara Okafor').fill('surgeon who moved to the city hospital')
    await page.getByRole('button', { name: 'Save changes' }).click()
    const hints = page.getByTestId('review-hints')
    await hints.waitFor()
    expect(await hints.textContent()).toContain('Amara Okafor member of Harbor Rowing Club')
    expect(await page.getByTestId('observation').textContent()).toContain('surgeon who moved to the city hospital')
    await harness.screenshot(page, 'app-observation-edited')
  })

  it('deletes an observation and reports what was pruned', async () => {
    const slug = await capture(page, 'Parking permit', 'Amara got a permit for the staff car park.', [
      { name: 'Staff Parking Permit', type: 'document', description: 'permit for the staff car park behind the building' },
    ], ['Amara Okafor', 'holds', 'Staff Parking Permit'])
    expect(await page.getByTestId('written-slug').textContent()).toBe(slug)
    await page.getByTestId('write-result').getByRole('link', { name: 'Parking permit' }).click()
    await page.getByRole('button', { name: 'Delete' }).click()
    await page.getByTestId('delete-result').waitFor()
    expect(await page.getByTestId('pruned-entities').textContent()).toContain('Staff Parking Permit')
    expect(await page.getByTestId('pruned-relationships').textContent()).toContain('Amara Okafor holds Staff Parking Permit')
    await harness.screenshot(page, 'app-deleted')
  })

  it('proposes a merge of variant names and accepts it with the chosen canonical name', async () => {
    await capture(page, 'Regatta entry', `Dr. Amara Okafor entered the spring regatta. ${'The crew trained at dawn all month. '.repeat(12)}Final line of the entry.`, [
      { name: 'Dr. Amara Okafor', type: 'person', description: 'surgeon who rows on weekends' },
      { name: 'Spring Regatta', type: 'event', description: 'yearly boat race on the lake' },
    ], ['Dr. Amara Okafor', 'competes_in', 'Spring Regatta'])
    // the write response already points at the likely duplicate
    expect(await page.getByTestId('possible-duplicates').textContent()).toContain('“Dr. Amara Okafor” looks like existing “Amara Okafor”')
    await page.getByRole('link', { name: 'Consolidate' }).click()
    await page.getByRole('button', { name: 'Run consolidation' }).click()
    await page.getByTestId('consolidation-status').waitFor()
    const proposal = page.getByTestId('proposals').locator('li.card', { hasText: 'Dr. Amara Okafor' })
    expect(await proposal.locator('strong').textContent()).toMatch(/^(Amara Okafor ↔ Dr\. Amara Okafor|Dr\. Amara Okafor ↔ Amara Okafor)$/)
    expect(await proposal.locator('ul li').count()).toBeGreaterThan(0)
    // both sides are shown with what they are, to judge the merge on
    const sides = proposal.getByTestId('proposal-sides')
    await expect.poll(() => sides.textContent()).toContain('surgeon who rows on weekends')
    expect(await sides.textContent()).toContain('surgeon who moved to the city hospital')
    expect(await sides.textContent()).toContain('Spring Regatta')
    await harness.screenshot(page, 'app-consolidation')
    await proposal.getByLabel('Amara Okafor', { exact: true }).check()
    await proposal.getByRole('button', { name: 'Accept merge' }).click()
    await expect.poll(() => page.getByTestId('consolidation-status').textContent()).toBe('Merged into “Amara Okafor”.')

    await page.getByTestId('proposals').getByRole('link', { name: 'Amara Okafor', exact: true }).click()
    await page.getByTestId('entity-page').waitFor()
    expect(await page.getByTestId('outgoing').textContent()).toContain('competes in Spring Regatta')
    // the merged-away name as it was written, not as its normalized key
    await expect.poll(() => page.getByTestId('aliases').textContent()).toContain('Dr. Amara Okafor')
    expect(await page.getByTestId('entity-degree').textContent()).toBe('2')
  })

  it('keeps everything across a reload (real IndexedDB, reattached connection)', async () => {
    const tokens = () => page.evaluate(() => Object.entries(localStorage).filter(([k]) => k.startsWith('cairn.connection.')))
    const before = await tokens()
    expect(before).toHaveLength(1)
    await page.goto('/')
    await page.waitForSelector('html[data-ready="true"]')
    const list = page.getByTestId('memory-list')
    await list.getByRole('link', { name: 'Clinic notes' }).waitFor()
    expect(await page.getByTestId('retrieval-config').textContent()).toContain('cairn-glove-100d@1')
    await harness.screenshot(page, 'app-memories')
    await list.getByRole('link', { name: 'Clinic notes' }).click()
    const ranked = await recall(page, 'surgeon')
    expect(ranked).toContain('Amara Okafor')
    expect(ranked).not.toContain('Staff Parking Permit')
    const regatta = page.getByTestId('snippets').locator('li.card', { hasText: 'Regatta entry' })
    expect(await regatta.textContent()).not.toContain('Final line of the entry.')
    await regatta.getByRole('button', { name: 'Show full' }).click()
    await expect.poll(() => regatta.textContent()).toContain('Final line of the entry.')
    // structural recall: no query, an entity filter
    await page.getByLabel('Query', { exact: true }).fill('')
    await page.getByText('Filters (narrow a query, or pick notes without one)').click()
    await page.getByLabel('Entity').fill('Spring Regatta')
    await page.getByRole('button', { name: 'Recall', exact: true }).click()
    await expect.poll(() => page.getByTestId('recall-result').getAttribute('data-mode')).toBe('structural')
    expect(await page.getByTestId('snippets').locator('.note-title').allTextContents()).toEqual(['Regatta entry'])
    // the stored token was accepted, so no second connection was made
    expect(await tokens()).toEqual(before)
    await page.setViewportSize({ width: 390, height: 844 })
    await harness.screenshot(page, 'app-recall-phone')
  })

  it('logs no page errors', () => {
    expect(harness.pageErrors).toEqual([])
  })
})
