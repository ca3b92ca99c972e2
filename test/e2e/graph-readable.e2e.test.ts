// A graph a person can read, at about ten entities: one color per entity type with a legend
// entry each, every name drawn whole inside the canvas (checked on what the scene computed for
// its last frame), a slice around a center opened with that center in the middle, and the
// search box moving the view to an entity.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Page } from 'playwright-core'
import type { SceneReport } from '../../src/app/graph/scene'
import { startHarness, type Harness } from './harness'
import { installToolRegistry, seed } from './seed'
import { createMemory } from './ui'

const ENTITIES: Array<[string, string]> = [
  ['Maria Chen', 'person'],
  ['Bob Smith', 'person'],
  ['Dana Whitfield', 'person'],
  ['Oskar Lindqvist-Hernandez', 'person'],
  ['Acme Corporation', 'organization'],
  ['International Federation of Beekeepers', 'organization'],
  ['Northwind Traders', 'organization'],
  ['Atlas Migration', 'project'],
  ['Billing Platform Rewrite', 'project'],
  ['Lisbon Office', 'place'],
]

async function report(page: Page): Promise<SceneReport> {
  return page.getByTestId('graph-view').evaluate((el) => (el as HTMLElement & { sceneReport(): SceneReport }).sceneReport())
}

/** Waits until the graph is drawn and sigma has painted a couple of frames. */
async function drawn(page: Page, nodes: number): Promise<void> {
  await expect.poll(() => page.getByTestId('graph-view').getAttribute('data-node-count'), { timeout: 20_000 }).toBe(String(nodes))
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))))
}

describe('a readable graph', () => {
  let harness: Harness
  let page: Page
  let memoryId: string

  beforeAll(async () => {
    harness = await startHarness()
    await installToolRegistry(harness.device.context)
    page = await harness.openApp('/')
    await page.setViewportSize({ width: 1100, height: 760 })
    memoryId = await createMemory(page, 'Readable graph')
    const entity = ([name, type]: [string, string]) => ({ name, type, description: `${name}, a ${type} in the test graph` })
    const at = (i: number) => ENTITIES[i]!
    await seed(page, [
      { title: 'Atlas kickoff', content: 'Maria leads Atlas at Acme; Bob reviews.', entities: [0, 1, 4, 7].map((i) => entity(at(i))), relationships: [
        { source: 'Maria Chen', type: 'leads', target: 'Atlas Migration' }, { source: 'Bob Smith', type: 'works_at', target: 'Acme Corporation' },
        { source: 'Maria Chen', type: 'works_at', target: 'Acme Corporation' }, { source: 'Atlas Migration', type: 'owned_by', target: 'Acme Corporation' },
      ] },
      { title: 'Billing', content: 'Dana runs the billing rewrite from Lisbon.', entities: [2, 8, 9, 4].map((i) => entity(at(i))), relationships: [
        { source: 'Dana Whitfield', type: 'leads', target: 'Billing Platform Rewrite' }, { source: 'Dana Whitfield', type: 'based_in', target: 'Lisbon Office' },
        { source: 'Billing Platform Rewrite', type: 'owned_by', target: 'Acme Corporation' },
      ] },
      { title: 'Partners', content: 'Oskar links Northwind and the beekeepers.', entities: [3, 5, 6, 0].map((i) => entity(at(i))), relationships: [
        { source: 'Oskar Lindqvist-Hernandez', type: 'member_of', target: 'International Federation of Beekeepers' },
        { source: 'Oskar Lindqvist-Hernandez', type: 'works_at', target: 'Northwind Traders' }, { source: 'Maria Chen', type: 'knows', target: 'Oskar Lindqvist-Hernandez' },
      ] },
    ])
  })
  afterAll(async () => {
    await harness?.close()
  })

  it('colors by type with a legend entry per type, and labels every entity whole inside the canvas', async () => {
    await page.getByRole('link', { name: 'Graph', exact: true }).click()
    await drawn(page, ENTITIES.length)
    const entries = page.getByTestId('legend-entry')
    expect(await entries.evaluateAll((els) => els.map((e) => e.getAttribute('data-type')))).toEqual(['person', 'organization', 'project', 'place'])
    expect(await entries.allTextContents()).toEqual(['person (4)', 'organization (3)', 'project (2)', 'place (1)'].map((t) => expect.stringContaining(t)))
    const swatches = await entries.locator('.swatch').evaluateAll((els) => els.map((e) => getComputedStyle(e).backgroundColor))
    expect(new Set(swatches).size).toBe(4)

    const r = await report(page)
    const box = (await page.getByTestId('graph-view').boundingBox())!
    expect(r.view.width).toBeCloseTo(box.width - 2, -1)
    // the best-connected entities (here every one) are labeled, each label whole in the view
    expect(r.labels.map((l) => l.name).sort()).toEqual(ENTITIES.map(([n]) => n).sort())
    for (const l of r.labels) {
      expect(l.left, l.name).toBeGreaterThanOrEqual(0)
      expect(l.top, l.name).toBeGreaterThanOrEqual(0)
      expect(l.right, l.name).toBeLessThanOrEqual(r.view.width)
      expect(l.bottom, l.name).toBeLessThanOrEqual(r.view.height)
    }
    // and no name is drawn over another
    for (const [i, a] of r.labels.entries()) {
      for (const b of r.labels.slice(i + 1)) {
        expect(a.right <= b.left || b.right <= a.left || a.bottom <= b.top || b.bottom <= a.top, `${a.name} / ${b.name}`).toBe(true)
      }
    }
    // fitted: every node inside the view, clear of its edges
    for (const n of r.nodes) {
      expect(n.x, n.name).toBeGreaterThan(10)
      expect(n.x, n.name).toBeLessThan(r.view.width - 10)
      expect(n.y, n.name).toBeGreaterThan(10)
      expect(n.y, n.name).toBeLessThan(r.view.height - 10)
    }
    await harness.screenshot(page, 'graph-readable-types')
  })

  it('opens the graph around a center with the center in the middle of the view', async () => {
    await page.goto(`${harness.baseUrl}#/m/${encodeURIComponent(memoryId)}/graph/${encodeURIComponent('Dana Whitfield')}`)
    await page.getByRole('heading', { name: 'Graph around Dana Whitfield' }).waitFor()
    await expect.poll(async () => Number(await page.getByTestId('graph-view').getAttribute('data-node-count'))).toBeGreaterThan(3)
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))))
    const r = await report(page)
    const center = r.nodes.find((n) => n.name === 'Dana Whitfield')!
    expect(Math.abs(center.x - r.view.width / 2)).toBeLessThan(2)
    expect(Math.abs(center.y - r.view.height / 2)).toBeLessThan(2)
    for (const l of r.labels) expect(l.right <= r.view.width && l.left >= 0, l.name).toBe(true)
    await harness.screenshot(page, 'graph-readable-center')
  })

  it('the search box moves the view to the entity it names', async () => {
    await page.getByRole('link', { name: 'Graph', exact: true }).click()
    await drawn(page, ENTITIES.length)
    const before = (await report(page)).nodes.find((n) => n.name === 'Lisbon Office')!
    const view = (await report(page)).view
    // it starts away from the middle, so the move is seen
    expect(Math.hypot(before.x - view.width / 2, before.y - view.height / 2)).toBeGreaterThan(20)
    await page.getByLabel('Find an entity').fill('lisbon office')
    await page.getByRole('button', { name: 'Center' }).click()
    await expect.poll(() => page.getByTestId('graph-found').textContent()).toBe('Centered on Lisbon Office')
    const r = await report(page)
    expect(r.focused?.name).toBe('Lisbon Office')
    expect(Math.abs(r.focused!.x - r.view.width / 2)).toBeLessThan(2)
    expect(Math.abs(r.focused!.y - r.view.height / 2)).toBeLessThan(2)
    for (const l of r.labels) expect(l.right <= r.view.width && l.left >= 0 && l.top >= 0 && l.bottom <= r.view.height, l.name).toBe(true)
    await harness.screenshot(page, 'graph-readable-found')
  })
})
