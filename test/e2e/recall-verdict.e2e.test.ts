// "No match is an answer" and "every note is findable", in the app: a note captured with no link
// comes back from Recall (under the notes that name no entity) and from the Notes search with its
// words marked; a query nothing in the memory holds shows "Nothing matches" and no entities.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Page } from 'playwright-core'
import { startHarness, type Harness } from './harness'
import { installToolRegistry, seed } from './seed'
import { capture, createMemory, recall } from './ui'

describe('recall verdicts and notes without entities', () => {
  let harness: Harness
  let page: Page

  beforeAll(async () => {
    harness = await startHarness()
    await installToolRegistry(harness.device.context)
    page = await harness.openApp('/')
    await createMemory(page, 'Work')
    await seed(page, [
      {
        title: 'Atlas kickoff',
        content: 'Maria Chen leads the Atlas migration; Bob Smith reviews the API design.',
        entities: [
          { name: 'Maria Chen', type: 'person', description: 'Engineering manager who leads the Atlas migration' },
          { name: 'Atlas', type: 'project', description: 'Migration of the billing system to the new platform' },
        ],
        relationships: [{ source: 'Maria Chen', type: 'leads', target: 'Atlas' }],
      },
    ])
  })
  afterAll(async () => {
    await harness?.close()
  })

  it('a note captured with no link is found by Recall and by the Notes search', async () => {
    await capture(page, 'Desk', 'Buy a standing desk before the Q1 budget closes.', [])
    expect(await recall(page, 'standing desk')).toEqual([])
    const result = page.getByTestId('recall-result')
    await expect.poll(() => result.getAttribute('data-match')).toBe('strong')
    await expect.poll(() => result.getByRole('heading', { name: 'Notes that name no entity' }).count()).toBe(1)
    expect(await result.getByTestId('snippets').locator('a').allTextContents()).toEqual(['Desk'])
    await harness.screenshot(page, 'recall-unlinked-note')

    await page.getByRole('link', { name: 'Notes', exact: true }).click()
    await page.getByLabel("Search the notes' text").fill('standing desks')
    await page.getByRole('button', { name: 'Search', exact: true }).click()
    await expect.poll(() => page.getByTestId('notes-count').textContent()).toContain('1 note holds “standing desks”')
    const note = page.getByTestId('note')
    expect(await note.locator('a strong').allTextContents()).toEqual(['Desk'])
    // "desks" finds "desk", in the title too
    expect(await note.locator('mark').allTextContents()).toEqual(['Desk', 'standing', 'desk'])
    await harness.screenshot(page, 'notes-search')
    await page.getByRole('button', { name: 'Show all' }).click()
    await expect.poll(() => page.getByTestId('notes-count').textContent()).toContain('2 notes')
  })

  it('a query nothing in the memory holds shows "Nothing matches" and no entities', async () => {
    expect(await recall(page, 'quantum chromodynamics lecture')).toEqual([])
    const verdict = page.getByTestId('nothing-matches')
    await verdict.waitFor()
    expect(await verdict.textContent()).toContain('Nothing matches “quantum chromodynamics lecture”')
    expect(await page.getByTestId('snippets').count()).toBe(0)
    await harness.screenshot(page, 'recall-nothing-matches')
    // and a question it answers still answers (the result replaces the one on screen)
    await recall(page, 'who leads the Atlas migration')
    await expect.poll(() => page.getByTestId('recall-result').getAttribute('data-match')).toBe('strong')
    expect(await page.getByTestId('recalled-entities').locator('li strong').allTextContents()).toContain('Maria Chen')
  })
})
