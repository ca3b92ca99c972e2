// Every main screen on a phone-sized viewport, checked with axe-core (labels, names, contrast,
// landmarks, ARIA) and for sideways scrolling; capture is done from the keyboard alone.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Page } from 'playwright-core'
import { startHarness, type Harness } from './harness'
import { capture, openMemoryMenu, recall } from './ui'
import { readAxe, serious } from './axe'

const PHONE = { width: 390, height: 844 }

/** How far the page is wider than the screen, in CSS pixels; 0 when nothing scrolls sideways. */
const overflow = (page: Page): Promise<number> => page.evaluate(() => Math.max(0, document.documentElement.scrollWidth - window.innerWidth))

describe('Cairn app on a phone, with a screen reader’s checks and the keyboard', () => {
  let harness: Harness
  let page: Page
  let axeSource: string

  beforeAll(async () => {
    axeSource = await readAxe()
    harness = await startHarness()
    page = await harness.openApp('/')
    await page.setViewportSize(PHONE)
    page.on('dialog', (d) => void d.accept())
  })
  afterAll(async () => {
    await harness?.close()
  })

  it('the memory list has no serious accessibility findings and fits the screen', async () => {
    await page.getByRole('button', { name: 'Create memory' }).waitFor()
    expect(await serious(page, axeSource)).toEqual([])
    expect(await overflow(page)).toBe(0)
  })

  it('creates a memory and captures an observation from the keyboard alone', async () => {
    await page.getByLabel('Name').focus()
    await page.keyboard.type('Phone notes')
    await page.keyboard.press('Enter')
    await page.getByRole('heading', { name: 'Capture an observation' }).waitFor()
    // the note has focus; a [[link]] makes a new entity, and Tab goes on to its type and description
    const active = (label: string) => page.getByLabel(label, { exact: true }).evaluate((el) => el === document.activeElement)
    await expect.poll(() => active('Note')).toBe(true)
    await page.keyboard.type('Took the 7 bus with [[Lena Park]] to the clinic.')
    await page.keyboard.press('Tab')
    expect(await active('Type of Lena Park')).toBe(true)
    await page.keyboard.type('person')
    await page.keyboard.press('Tab')
    expect(await active('Description of Lena Park')).toBe(true)
    await page.keyboard.type('nurse who commutes by bus')
    await page.keyboard.press('Control+Enter')
    await page.getByTestId('written-slug').waitFor()
    expect(await serious(page, axeSource)).toEqual([])
    expect(await overflow(page)).toBe(0)
    await harness.screenshot(page, 'phone-capture')
  })

  it('recall, entity, graph, consolidation, files and connections screens pass too', async () => {
    await capture(page, 'Clinic shift', 'Lena Park works nights at the Harbor Clinic.', [
      { name: 'Lena Park', type: 'person', description: 'nurse who commutes by bus' },
      { name: 'Harbor Clinic', type: 'organization', description: 'walk-in clinic by the harbor' },
    ], ['Lena Park', 'works_at', 'Harbor Clinic'])
    expect(await recall(page, 'nurse')).toContain('Lena Park')
    const findings: Record<string, string[]> = {}
    const widths: Record<string, number> = {}
    const check = async (screen: string) => {
      findings[screen] = await serious(page, axeSource)
      widths[screen] = await overflow(page)
    }
    await check('recall')
    await harness.screenshot(page, 'phone-recall')
    await page.getByTestId('recalled-entities').getByRole('link', { name: 'Lena Park', exact: true }).click()
    await page.getByTestId('entity-page').waitFor()
    await check('entity')
    await harness.screenshot(page, 'phone-entity')
    for (const [link, ready] of [
      ['Consolidate', 'Run consolidation'],
      ['Files', 'Store file'],
      ['Connections', 'Create connection'],
    ] as const) {
      await page.getByRole('link', { name: link, exact: true }).click()
      await page.getByRole('button', { name: ready }).waitFor()
      await check(link.toLowerCase())
    }
    await page.getByRole('link', { name: 'Notes', exact: true }).click()
    await page.getByTestId('notes-count').waitFor()
    await check('notes')
    await harness.screenshot(page, 'phone-notes')
    // capture with link offers, a new entity's fields and relationship offers on screen
    await page.getByRole('link', { name: 'Capture', exact: true }).click()
    await page.getByLabel('Note', { exact: true }).fill('Lena Park met [[Omar Haddad]] at the Harbor Clinic after the Night Market.')
    // the known names are offered until linked; linking them makes relationship offers
    await page.getByLabel('Note', { exact: true }).press('Alt+l')
    await page.getByTestId('relationship-offer').first().waitFor()
    await check('capture')
    await harness.screenshot(page, 'phone-capture-offers')
    await page.getByRole('link', { name: 'Graph', exact: true }).click()
    await page.locator('canvas').first().waitFor()
    await check('graph')
    await harness.screenshot(page, 'phone-graph')
    // the memory menu open, with sync, visibility and export
    await openMemoryMenu(page)
    await page.getByRole('button', { name: 'Change visibility' }).waitFor()
    await check('menu')
    await harness.screenshot(page, 'phone-memory-menu')
    expect(findings).toEqual({ recall: [], entity: [], consolidate: [], files: [], connections: [], notes: [], capture: [], graph: [], menu: [] })
    expect(widths).toEqual({ recall: 0, entity: 0, consolidate: 0, files: 0, connections: 0, notes: 0, capture: 0, graph: 0, menu: 0 })
  })

  it('logs no page errors', () => {
    expect(harness.pageErrors).toEqual([])
  })
})
