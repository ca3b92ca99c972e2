// The graph screen in headless Chromium (--disable-gpu, so WebGL comes from SwiftShader):
// observations written through the UI appear as nodes; finding an entity and a node click work.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Page } from 'playwright-core'
import { startHarness, type Harness } from './harness'
import { createMemory, openFullForm } from './ui'

async function capture(page: Page, title: string, entities: Array<[string, string]>, rel?: [string, string, string]): Promise<void> {
  await page.getByRole('link', { name: 'Capture' }).click()
  await page.getByLabel('Title').fill(title)
  await page.getByLabel('Note', { exact: true }).fill(`${title}.`)
  await openFullForm(page)
  const rows = page.getByTestId('entity-row')
  for (const [i, [name, description]] of entities.entries()) {
    if ((await rows.count()) <= i) await page.getByRole('button', { name: 'Add entity' }).click()
    await rows.nth(i).getByLabel('Name').fill(name)
    await rows.nth(i).getByLabel('Type').fill('person')
    await rows.nth(i).getByLabel('Description (required)').fill(description)
  }
  if (rel) {
    const row = page.getByTestId('relationship-row').first()
    await row.getByLabel('Source').fill(rel[0])
    await row.getByLabel('Type').fill(rel[1])
    await row.getByLabel('Target').fill(rel[2])
  }
  await page.getByLabel('Title').press('Control+Enter')
  await page.getByTestId('written-slug').waitFor()
  await expect.poll(() => page.getByLabel('Title').inputValue()).toBe('')
}

describe('graph view', () => {
  let harness: Harness
  let page: Page

  beforeAll(async () => {
    harness = await startHarness()
    page = await harness.openApp('/')
  })
  afterAll(async () => {
    await harness?.close()
  })

  it('draws every entity written through the UI on a WebGL canvas', async () => {
    const webgl = await page.evaluate(() => !!document.createElement('canvas').getContext('webgl2'))
    expect(webgl).toBe(true)
    await createMemory(page, 'Graph notes')
    await capture(page, 'Ada mentors Ben', [['Ada Lovelace', 'mathematician'], ['Ben Carter', 'student of mathematics']], ['Ada Lovelace', 'mentors', 'Ben Carter'])
    await capture(page, 'Ben knows Cleo', [['Ben Carter', 'student of mathematics'], ['Cleo Park', 'engineer at the lab']], ['Ben Carter', 'knows', 'Cleo Park'])
    await capture(page, 'Dana keeps bees', [['Dana Ruiz', 'beekeeper on the hill']])

    await page.getByRole('link', { name: 'Graph' }).click()
    const view = page.getByTestId('graph-view')
    await expect.poll(() => view.getAttribute('data-node-count')).toBe('4')
    expect(await view.getAttribute('data-edge-count')).toBe('2')
    expect(await page.getByTestId('graph-no-webgl').count()).toBe(0)
    // sigma draws into its own canvases inside the container
    expect(await view.locator('canvas').count()).toBeGreaterThan(1)
    await harness.screenshot(page, 'graph-view')
  })

  it('fits the canvas on screen under a legend, and draws the same layout on every load', async () => {
    await page.setViewportSize({ width: 1280, height: 800 })
    const view = page.getByTestId('graph-view')
    const settled = async () => {
      await expect.poll(() => view.getAttribute('data-node-count')).toBe('4')
      await expect.poll(() => page.getByText('Arranging the graph…').count()).toBe(0)
      // sigma draws on the next frames
      await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))))
    }
    await settled()
    const box = (await view.boundingBox())!
    expect(box.y + box.height).toBeLessThanOrEqual(800)
    expect(box.height).toBeGreaterThan(320)
    expect(await page.getByTestId('graph-legend').textContent()).toContain('person (4)')
    const first = await view.screenshot()
    await page.getByRole('link', { name: 'Recall', exact: true }).click()
    await page.getByRole('link', { name: 'Graph', exact: true }).click()
    await settled()
    expect((await view.screenshot()).equals(first)).toBe(true)
    await harness.screenshot(page, 'graph-desktop')
  })

  it('centers a drawn entity from the keyboard and opens it with a click in the middle', async () => {
    await page.getByLabel('Find an entity').fill('dana ruiz')
    await page.getByLabel('Find an entity').press('Enter')
    const view = page.getByTestId('graph-view')
    await expect.poll(() => page.getByTestId('graph-found').textContent()).toBe('Centered on Dana Ruiz')
    // the view moved: the graph is the same
    expect(await view.getAttribute('data-node-count')).toBe('4')
    // the entity now sits in the middle of the view, which must be on screen to be clicked
    await view.scrollIntoViewIfNeeded()
    const box = await view.boundingBox()
    expect(box).not.toBeNull()
    await page.mouse.click(box!.x + box!.width / 2, box!.y + box!.height / 2)
    await page.getByTestId('entity-page').waitFor()
    expect(await page.getByRole('heading', { level: 2 }).textContent()).toBe('Dana Ruiz')
  })

  it('shows the engine message for an unknown center', async () => {
    await page.getByRole('link', { name: 'Graph' }).click()
    await page.getByLabel('Find an entity').fill('Nobody Here')
    await page.getByLabel('Find an entity').press('Enter')
    await expect.poll(async () => (await page.getByRole('alert').allTextContents()).join(' ')).toContain('Nobody Here')
  })

  it('leaving the graph right after a drag raises no error', async () => {
    await page.getByRole('link', { name: 'Graph', exact: true }).click()
    const view = page.getByTestId('graph-view')
    await expect.poll(() => view.getAttribute('data-node-count')).not.toBe('')
    await view.scrollIntoViewIfNeeded()
    const box = (await view.boundingBox())!
    // a pan that starts on empty canvas, released, then straight to another screen
    await page.mouse.move(box.x + 20, box.y + 20)
    await page.mouse.down()
    for (let i = 1; i <= 5; i++) await page.mouse.move(box.x + 20 + i * 30, box.y + 20 + i * 10)
    await page.mouse.up()
    await page.getByRole('link', { name: 'Recall', exact: true }).click()
    await page.getByRole('heading', { name: 'Recall' }).first().waitFor()
    await new Promise((r) => setTimeout(r, 300))
    expect(harness.pageErrors).toEqual([])
  })
})
