// Facts that change, in the app: a note that supersedes another shows on the entity page's
// timeline and on both notes' pages, and a supersession consolidation proposes from a
// single-valued type is read as "X replaces Y from <date>" and accepted from the review screen.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Page } from 'playwright-core'
import type { ObservationInput } from '../../src/core/types'
import { startHarness, type Harness } from './harness'
import { installToolRegistry, seed } from './seed'
import { createMemory } from './ui'
import { readAxe, serious } from './axe'

const dana = { name: 'Dana Reyes', type: 'person', description: 'engineer on the payments team' }
const job = (org: string, validFrom: string, extra: Partial<ObservationInput> = {}): ObservationInput => ({
  title: `Dana works at ${org}`,
  content: `Dana Reyes joined ${org} as an engineer.`,
  validFrom,
  entities: [dana, { name: org, type: 'organization', description: `the company ${org}` }],
  relationships: [{ source: 'Dana Reyes', type: 'works_at', target: org }],
  ...extra,
})

/** Runs one of the app's page tools and returns its answer. */
async function tool(page: Page, name: string, args: unknown): Promise<unknown> {
  await page.waitForFunction((n) => window.seedTools?.has(n), name)
  return page.evaluate(
    async ([n, a]) => {
      const r = await window.seedTools!.get(n as string)!.execute(a)
      const body = JSON.parse(r.content[0]!.text)
      if (r.isError) throw new Error(JSON.stringify(body))
      return body
    },
    [name, args] as const,
  )
}

describe('a fact superseded, in the app', () => {
  let harness: Harness
  let page: Page
  let memoryId = ''
  let acme = ''
  let beta = ''

  beforeAll(async () => {
    harness = await startHarness()
    await installToolRegistry(harness.device.context)
    page = await harness.openApp('/')
    memoryId = await createMemory(page, 'People')
    acme = (await seed(page, [job('Acme', '2020-03-01')]))[0]!
    beta = (await seed(page, [job('Beta', '2024-01-15', { supersedes: [acme] })]))[0]!
  })
  afterAll(async () => {
    await harness?.close()
  })

  it('shows the entity\'s timeline in order, the superseded note marked with what replaced it', async () => {
    await page.evaluate((h) => (location.hash = h), `#/m/${encodeURIComponent(memoryId)}/entity/${encodeURIComponent('Dana Reyes')}`)
    const timeline = page.getByTestId('entity-timeline')
    await timeline.waitFor()
    const rows = timeline.locator('li')
    expect(await rows.count()).toBe(2)
    expect(await rows.nth(0).getAttribute('data-slug')).toBe(acme)
    expect(await rows.nth(0).getAttribute('data-current')).toBe('false')
    expect(await rows.nth(0).textContent()).toMatch(/from 2020-03-01 to 2024-01-15\s*· superseded by\s+Dana works at Beta/)
    expect(await rows.nth(1).getAttribute('data-current')).toBe('true')
    expect(await rows.nth(1).textContent()).toMatch(/from 2024-01-15\s*current\s*· replaces\s+Dana works at Acme/)
    // the edge to the old employer is listed as past
    expect(await page.getByTestId('outgoing').locator('li[data-current="false"]').textContent()).toMatch(/works at Acme.*no longer holds/)
    expect(await page.getByTestId('outgoing').locator('li[data-current="true"]').textContent()).toContain('Beta')
    expect(await serious(page, await readAxe())).toEqual([])
    await harness.screenshot(page, 'timeline-entity')

    // the older note's page says what replaced it, and links there
    await rows.nth(0).getByRole('link', { name: 'Dana works at Acme' }).click()
    const acmeTime = page.getByTestId('note-timeline')
    await expect.poll(() => acmeTime.textContent()).toContain('Superseded by')
    expect(await acmeTime.textContent()).toContain('Holds from 2020-03-01 to 2024-01-15 · no longer current')
    await acmeTime.getByRole('link', { name: 'Dana works at Beta' }).click()
    await expect.poll(() => page.getByTestId('note-replaces').textContent()).toContain('Replaces Dana works at Acme')
    expect(await page.getByTestId('note-timeline').textContent()).toContain('Holds from 2024-01-15 · current')
    expect(await serious(page, await readAxe())).toEqual([])
    await harness.screenshot(page, 'timeline-note')
  })

  it('shows a supersession proposal as what replaces what, with both notes, and accepts it', async () => {
    expect(await tool(page, 'set_single_valued', { types: ['works_at'] })).toEqual(['works_at'])
    const [gamma] = await seed(page, [job('Gamma', '2025-06-01')])
    await page.getByRole('link', { name: 'Consolidate' }).click()
    await page.getByRole('button', { name: 'Run consolidation' }).click()
    await page.getByTestId('consolidation-status').waitFor()
    const card = page.getByTestId('proposals').locator('li.card[data-kind="supersede"]')
    expect(await card.count()).toBe(1)
    expect(await card.locator('strong').textContent()).toBe('Dana Reyes works at Gamma replaces Dana Reyes works at Beta from 2025-06-01')
    const sides = card.getByTestId('supersede-sides')
    await expect.poll(() => sides.locator('[data-side="older"]').textContent()).toContain('Dana Reyes joined Beta')
    expect(await sides.locator('[data-side="older"]').textContent()).toContain('from 2024-01-15')
    expect(await sides.locator('[data-side="newer"]').textContent()).toContain('Dana Reyes joined Gamma')
    // a supersession asks for no canonical name
    expect(await card.getByRole('radio').count()).toBe(0)
    expect(await serious(page, await readAxe())).toEqual([])
    await harness.screenshot(page, 'timeline-supersede-proposal')
    await card.getByRole('button', { name: 'Accept: Gamma replaces Beta' }).click()
    await expect.poll(() => page.getByTestId('consolidation-status').textContent()).toBe(
      'Recorded: Dana Reyes works at Gamma replaces Dana Reyes works at Beta from 2025-06-01. The older note is kept as history.',
    )
    expect(await page.getByTestId('proposals').locator('li.card[data-kind="supersede"]').getAttribute('data-status')).toBe('accepted')

    // the timeline now ends Beta where Gamma starts; only Gamma and the decision hold
    await page.getByTestId('proposals').getByRole('link', { name: 'Dana Reyes' }).click()
    const rows = page.getByTestId('entity-timeline').locator('li')
    await expect.poll(() => rows.count()).toBe(4)
    const state = await rows.evaluateAll((els) => els.map((e) => [e.getAttribute('data-slug'), e.getAttribute('data-current')]))
    expect(state.slice(0, 2)).toEqual([[acme, 'false'], [beta, 'false']])
    expect(state.filter(([, c]) => c === 'true').map(([s]) => s)).toContain(gamma)
    expect(await rows.nth(1).textContent()).toMatch(/from 2024-01-15 to 2025-06-01\s*· superseded by/)
    await harness.screenshot(page, 'timeline-after-accept')
    expect(harness.pageErrors).toEqual([])
  })
})
