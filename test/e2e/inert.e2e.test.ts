// Markup and script typed into every text field of a capture stay text on every screen that
// shows them: nothing runs, no element is injected, and the characters are shown as typed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Page } from 'playwright-core'
import { startHarness, type Harness } from './harness'
import { createMemory, openFullForm, recall } from './ui'

const hostile = (n: number): string => `<img src=x onerror="window.__pwned=${n}"><script>window.__pwned=${n}</script>`
const NAME = 'Mallory <b onmouseover="window.__pwned=9">Bold</b>'

/** Anything the payloads would have put into the page if it had been parsed as markup. */
const injected = (page: Page): Promise<{ pwned: unknown; elements: number }> =>
  page.evaluate(() => ({
    pwned: (window as unknown as { __pwned?: unknown }).__pwned,
    elements: document.querySelectorAll('img[src="x"], [onerror], [onmouseover], [onload], main script, main b').length,
  }))

describe('Cairn app, hostile text', () => {
  let harness: Harness
  let page: Page
  let slug = ''

  beforeAll(async () => {
    harness = await startHarness()
    page = await harness.openApp('/')
    await createMemory(page, 'Inert text')
  })
  afterAll(async () => {
    await harness?.close()
  })

  it('saves markup in every text field as it was typed', async () => {
    await page.getByLabel('Title').fill(`Title ${hostile(1)}`)
    await page.getByLabel('Note', { exact: true }).fill(`Content ${hostile(2)} and more words about Mallory`)
    await openFullForm(page)
    await page.locator('input[name="category"]').fill('cat<i onmouseover="window.__pwned=3">x</i>')
    await page.locator('input[name="tags"]').fill('tag<u>x</u>, <img src=x onerror="window.__pwned=4">')
    await page.locator('input[name="source"]').fill(`javascript:window.__pwned=5 ${hostile(5)}`)
    const row = page.getByTestId('entity-row').first()
    await row.getByLabel('Name').fill(NAME)
    await row.getByLabel('Type').fill(`person<svg onload="window.__pwned=6">`)
    await row.getByLabel('Description (required)').fill(`tester who writes ${hostile(7)}`)
    await row.getByLabel('Retrieval queries, one per line (optional)').fill(`who is ${hostile(8)}`)
    await page.getByRole('button', { name: 'Add entity' }).click()
    const second = page.getByTestId('entity-row').nth(1)
    await second.getByLabel('Name').fill('Test Lab')
    await second.getByLabel('Type').fill('place')
    await second.getByLabel('Description (required)').fill('where <marquee>tests</marquee> run')
    const rel = page.getByTestId('relationship-row').first()
    await rel.getByLabel('Source').fill(NAME)
    await rel.getByLabel('Type').fill('works_at<img src=x onerror="window.__pwned=10">')
    await rel.getByLabel('Target').fill('Test Lab')
    await page.getByLabel('Title').press('Control+Enter')
    await page.getByTestId('written-slug').or(page.getByRole('alert')).first().waitFor()
    // a refusal would show the engine's message here instead
    expect(await page.getByRole('alert').allTextContents()).toEqual([])
    slug = (await page.getByTestId('written-slug').textContent()) ?? ''
    expect(slug).not.toBe('')
    expect(await injected(page)).toEqual({ pwned: undefined, elements: 0 })
  })

  it('recall, the entity page, the observation and the graph show it as text', async () => {
    expect(await recall(page, 'tester who writes')).toContain(NAME)
    expect(await page.getByTestId('recall-result').textContent()).toContain('<img src=x onerror=')
    expect(await injected(page)).toEqual({ pwned: undefined, elements: 0 })

    await page.getByTestId('recalled-entities').getByRole('link', { name: NAME, exact: true }).click()
    await page.getByTestId('entity-page').waitFor()
    expect(await page.getByTestId('entity-description').textContent()).toBe(`tester who writes ${hostile(7)}`)
    // relationship types are normalized (spaces become underscores), and still shown as text
    expect(await page.getByTestId('outgoing').textContent()).toContain('works at<img src=x onerror=')
    expect(await injected(page)).toEqual({ pwned: undefined, elements: 0 })

    await page.getByTestId('backing-observations').getByRole('link').first().click()
    const observation = page.getByTestId('observation')
    await observation.waitFor()
    const text = (await observation.textContent()) ?? ''
    for (const n of [1, 2, 5]) expect(text).toContain(`window.__pwned=${n}</script>`)
    expect(text).toContain('cat<i onmouseover="window.__pwned=3">x</i>')
    expect(text).toContain('<img src=x onerror="window.__pwned=4">')
    // hovering where the bold markup would be runs nothing either
    await observation.hover()
    expect(await injected(page)).toEqual({ pwned: undefined, elements: 0 })
    await harness.screenshot(page, 'inert-observation')

    await page.getByRole('link', { name: 'Graph', exact: true }).click()
    await page.locator('canvas').first().waitFor()
    await page.getByRole('link', { name: 'Consolidate' }).click()
    await page.getByRole('button', { name: 'Run consolidation' }).click()
    await page.getByTestId('consolidation-status').waitFor()
    expect(await injected(page)).toEqual({ pwned: undefined, elements: 0 })
  })

  it('logs no page errors', () => {
    expect(harness.pageErrors).toEqual([])
  })
})
