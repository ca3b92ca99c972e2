// The Notes screen and recall on a desktop and a phone: every note newest first and paged,
// filters, the timeline by observedAt, edit (including "Observed at") and delete from there;
// and recall answers with the first entity and its first note on screen without scrolling.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Page } from 'playwright-core'
import type { ObservationInput } from '../../src/core/types'
import { startHarness, type Harness } from './harness'
import { installToolRegistry, seed } from './seed'
import { createMemory } from './ui'

const VIEWPORTS = [
  { name: 'desktop', width: 1280, height: 800 },
  { name: 'phone', width: 390, height: 844 },
] as const

const PEOPLE = [
  ['Amara Okafor', 'cardiologist at the harbor clinic'],
  ['Tomas Berg', 'night nurse who plans the rota'],
  ['Ines Duarte', 'pharmacist who runs the dispensary'],
  ['Leo Brandt', 'volunteer ambulance driver'],
  ['Mina Sato', 'physiotherapist for the rowing club'],
] as const

/** 60 notes, one a day through October and November, about one person each and the clinic. */
function notes(): ObservationInput[] {
  return Array.from({ length: 60 }, (_, i) => {
    const [person, description] = PEOPLE[i % PEOPLE.length]!
    const day = new Date(Date.UTC(2026, 9, 1 + i, 9, 30)).toISOString()
    return {
      title: `Shift note ${String(i).padStart(2, '0')}`,
      content: `${person} covered shift ${i} at the Harbor Clinic.`,
      category: i % 3 === 0 ? 'meeting' : 'shift',
      tags: i % 4 === 0 ? ['rota', 'urgent'] : ['rota'],
      observedAt: day,
      entities: [
        { name: person, type: 'person', description },
        { name: 'Harbor Clinic', type: 'organization', description: 'walk-in clinic by the harbor' },
      ],
      relationships: [{ source: person, type: 'works at', target: 'Harbor Clinic' }],
    }
  })
}

/** The element's box lies inside the viewport: seen without scrolling. */
const onScreen = (page: Page, selector: string): Promise<boolean> =>
  page.locator(selector).first().evaluate((el) => {
    const r = el.getBoundingClientRect()
    return r.height > 0 && r.top >= 0 && r.bottom <= window.innerHeight
  })

describe.each(VIEWPORTS)('notes and recall at $width x $height', ({ name, width, height }) => {
  let harness: Harness
  let page: Page
  let memoryId = ''

  beforeAll(async () => {
    harness = await startHarness()
    await installToolRegistry(harness.device.context)
    page = await harness.openApp('/')
    page.on('dialog', (d) => void d.accept())
    await page.setViewportSize({ width, height })
    memoryId = await createMemory(page, `Ward ${name}`)
    await seed(page, notes())
  })
  afterAll(async () => {
    await harness?.close()
  })

  const count = () => page.getByTestId('notes-count').textContent()
  const titles = () => page.getByTestId('note').locator('a strong').allTextContents()

  it('lists every note newest first, a page at a time', async () => {
    await page.getByRole('link', { name: 'Notes', exact: true }).click()
    await expect.poll(count).toContain('60 notes, showing 25')
    expect((await titles())[0]).toBe('Shift note 59')
    await harness.screenshot(page, `notes-${name}-list`)
    await page.getByRole('button', { name: 'Show 25 more' }).click()
    await expect.poll(count).toContain('showing 50')
    await page.getByRole('button', { name: 'Show 10 more' }).click()
    await expect.poll(count).toContain('showing 60')
    const all = await titles()
    expect(new Set(all).size).toBe(60)
    expect(all.at(-1)).toBe('Shift note 00')
    expect(await page.getByRole('button', { name: /more$/ }).count()).toBe(0)
  })

  it('filters by category, tags, time and entity', async () => {
    await page.getByText('Filter by category, tags, time or entity').click()
    await page.getByLabel('Category').fill('meeting')
    await page.getByRole('button', { name: 'Filter', exact: true }).click()
    await expect.poll(count).toContain('20 notes match')
    await page.getByLabel('Tags (comma separated)').fill('urgent')
    await page.getByRole('button', { name: 'Filter', exact: true }).click()
    // every 12th note is both a meeting and urgent
    await expect.poll(count).toContain('5 notes match')
    await page.getByRole('button', { name: 'Clear filters' }).click()
    await expect.poll(count).toContain('60 notes')
    await page.getByText('Filter by category, tags, time or entity').click()
    await page.getByLabel('Entity', { exact: true }).fill('tomas berg')
    await page.getByLabel('Observed from').fill('2026-11-01')
    await page.getByLabel('Observed to').fill('2026-11-15')
    await page.getByRole('button', { name: 'Filter', exact: true }).click()
    // notes 31..45 fall in those days; Tomas Berg is in every fifth (i % 5 === 1)
    await expect.poll(count).toContain('3 notes match')
    expect(await titles()).toEqual(['Shift note 41', 'Shift note 36', 'Shift note 31'])
    await harness.screenshot(page, `notes-${name}-filtered`)
    await page.getByRole('button', { name: 'Clear filters' }).click()
    await expect.poll(count).toContain('60 notes')
  })

  it('edits a note\'s observed time from the timeline, then deletes it', async () => {
    await page.getByLabel('Timeline').check()
    await expect.poll(async () => (await titles())[0]).toBe('Shift note 59')
    expect(await page.getByTestId('notes-list').getByRole('heading', { level: 3 }).count()).toBeGreaterThan(3)
    await page.getByRole('button', { name: 'Show 25 more' }).click()
    await page.getByRole('button', { name: 'Show 10 more' }).click()
    await page.getByTestId('notes-list').getByRole('link', { name: 'Shift note 03' }).click()
    await page.getByRole('button', { name: 'Edit' }).click()
    await page.getByLabel('Observed at').fill('2026-12-24T08:00')
    await page.getByRole('button', { name: 'Save changes' }).click()
    await expect.poll(() => page.getByTestId('observation').textContent()).toContain('observed')
    await page.getByRole('link', { name: 'Notes', exact: true }).click()
    await page.getByLabel('Timeline').check()
    await expect.poll(async () => (await titles())[0]).toBe('Shift note 03')
    await harness.screenshot(page, `notes-${name}-timeline`)
    await page.getByTestId('notes-list').getByRole('link', { name: 'Shift note 03' }).click()
    await page.getByRole('button', { name: 'Delete' }).click()
    await page.getByTestId('delete-result').waitFor()
    await page.getByRole('link', { name: 'Back to notes' }).click()
    await expect.poll(count).toContain('59 notes')
  })

  it('recalls with the first entity and its first note on screen, weak matches left out', async () => {
    for (const query of ['pharmacist', 'who drives the ambulance', 'rowing physiotherapy']) {
      await page.getByRole('link', { name: 'Recall', exact: true }).click()
      await page.getByLabel('Query', { exact: true }).fill(query)
      await page.getByRole('button', { name: 'Recall', exact: true }).click()
      await page.getByTestId('recall-result').waitFor()
      await page.getByTestId('recalled-entities').locator('li.card').first().waitFor()
      expect(await onScreen(page, '[data-testid="recalled-entities"] > li strong'), `${query}: first entity`).toBe(true)
      expect(await onScreen(page, '[data-testid="snippets"] li.card'), `${query}: first note`).toBe(true)
      // what the caps dropped is said after the answer, in small print, not as a banner above it
      const note = page.getByTestId('truncation')
      if (await note.count()) {
        const [entityTop, noteTop] = await Promise.all([
          page.getByTestId('recalled-entities').evaluate((el) => el.getBoundingClientRect().bottom),
          note.evaluate((el) => el.getBoundingClientRect().top),
        ])
        expect(noteTop).toBeGreaterThan(entityTop)
      }
    }
    const shown = await page.getByTestId('recalled-entities').locator(':scope > li strong').allTextContents()
    expect(shown[0]).toBe('Mina Sato')
    // the other people share nothing with the query and are not listed
    expect(shown).not.toContain('Ines Duarte')
    await harness.screenshot(page, `recall-${name}`)
    await page.locator('details.memory-menu summary').click()
    await harness.screenshot(page, `memory-menu-${name}`)
    expect(memoryId).not.toBe('')
  })

  it('logs no page errors', () => {
    expect(harness.pageErrors).toEqual([])
  })
})
