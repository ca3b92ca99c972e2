// Types read one way on every screen (`works at`, never `works_at`), and a note that names an
// entity without describing it shows the name alone, with no dangling dash.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startHarness, type Harness } from './harness'
import { capture, openMemorySettings, recall } from './ui'

describe('types and descriptions as a person reads them', () => {
  let harness: Harness

  beforeAll(async () => {
    harness = await startHarness()
  })
  afterAll(async () => {
    await harness?.close()
  })

  it('shows relationship types with spaces in Recall, on the entity page and the note, and no "—" without a description', async () => {
    const page = await harness.openApp('/')
    await page.getByLabel('Name', { exact: true }).fill('Ward')
    await openMemorySettings(page)
    await page.getByLabel('Words only (BM25, no model)').check()
    await page.getByRole('button', { name: 'Create memory' }).click()
    await page.getByRole('heading', { name: 'Capture an observation' }).waitFor()
    await capture(page, 'Amara at the clinic', 'Amara works at the harbor clinic.', [
      { name: 'Amara Okafor', type: 'person', description: 'Cardiologist at the harbor clinic' },
      { name: 'Harbor Clinic', type: 'walk_in_clinic', description: 'Walk-in clinic by the harbor' },
    ], ['Amara Okafor', 'works_at', 'Harbor Clinic'])

    await recall(page, 'cardiologist')
    const edges = (await page.getByTestId('recalled-relationships').allTextContents()).join(' ')
    expect(edges).toContain('Amara Okafor works at Harbor Clinic')
    expect(edges).not.toContain('works_at')

    await page.getByTestId('recalled-entities').getByRole('link', { name: 'Harbor Clinic', exact: true }).click()
    await page.getByTestId('entity-page').waitFor()
    expect(await page.getByTestId('entity-page').textContent()).toContain('walk in clinic')
    expect(await page.getByTestId('incoming').textContent()).toContain('Amara Okafor works at')

    // a note naming Amara, known, without describing her
    await page.getByRole('link', { name: 'Capture' }).click()
    await page.getByLabel('Note', { exact: true }).fill('Amara Okafor was on call again.')
    await page.getByLabel('Note', { exact: true }).press('Alt+l')
    await expect.poll(() => page.getByTestId('linked-entity').count()).toBe(1)
    await page.getByLabel('Note', { exact: true }).press('Control+Enter')
    await page.getByTestId('write-result').getByRole('link').first().click()
    const note = page.getByTestId('observation')
    await note.waitFor()
    const entityLine = (await note.locator('ul').first().locator('li').first().textContent())?.replace(/\s+/g, ' ').trim()
    expect(entityLine).toBe('Amara Okafor person')
    await harness.screenshot(page, 'type-labels-note')
    expect(harness.pageErrors).toEqual([])
  })
})
