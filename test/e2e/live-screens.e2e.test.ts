// Screens follow changes made elsewhere: with two browser profiles syncing through a real server
// (and a second tab of one profile), an open Notes, Recall or entity screen shows another
// device's note without navigating, and what the person is typing stays as typed.
import { describe, expect, it } from 'vitest'
import type { Page } from 'playwright-core'
import { serverAndBrowser } from './server-and-browser'
import { capture, connectToServer, createMemory, recall, joinMemory } from './ui'

const noteTitles = (page: Page) => page.getByTestId('note').locator('strong').allTextContents()
const recalled = (page: Page) => page.getByTestId('recalled-entities').locator('li strong').allTextContents()
const backing = (page: Page) => page.getByTestId('backing-observations').locator('a').allTextContents()

/** Polls `read` until it holds `wanted`; returns the milliseconds from `since`. */
async function shownWithin(read: () => Promise<string[]>, wanted: string, since: number): Promise<number> {
  // the bound is generous for a loaded machine; the figures printed below are what it took
  await expect.poll(read, { timeout: 5_000, interval: 50 }).toContain(wanted)
  return Date.now() - since
}

describe('screens follow other devices and tabs', () => {
  const env = serverAndBrowser('live')

  it('Notes, Recall and an entity page on one device show the other device’s notes, keeping what is typed', async () => {
    const pageA = await env.harness.openApp('/')
    const id = await createMemory(pageA, 'Ward notes')
    await capture(pageA, 'Met Amara', 'Met Amara.', [{ name: 'Amara Okafor', type: 'person', description: 'Cardiologist at the city clinic' }])
    const { token } = env.server.tokens.add({ memoryId: id, tier: 'full', agent: 'person' })
    await connectToServer(pageA, env.server.url, token)

    const deviceB = await env.harness.newIsolatedContext()
    const pageB = await deviceB.openApp('/')
    await joinMemory(pageB, { id, shownAs: 'Ward notes', serverUrl: env.server.url, token })
    await expect.poll(() => recall(pageB, 'cardiologist'), { timeout: 15_000, interval: 300 }).toContain('Amara Okafor')
    const timings: Record<string, number> = {}

    // Notes, with a filter being typed and not yet applied
    await pageB.getByRole('link', { name: 'Notes' }).click()
    await expect.poll(() => noteTitles(pageB)).toEqual(['Met Amara'])
    await pageB.locator('details.filters summary').click()
    const category = pageB.getByLabel('Category')
    await category.fill('half typ')
    let since = Date.now()
    await capture(pageA, 'Night shift', 'Tomas covers the night shift.', [{ name: 'Tomas Berg', type: 'person', description: 'Radiologist who reads the scans' }])
    timings.notes = await shownWithin(() => noteTitles(pageB), 'Night shift', since)
    expect(await category.inputValue()).toBe('half typ')
    expect(await category.evaluate((el) => el === document.activeElement)).toBe(true)
    await env.harness.screenshot(pageB, 'live-notes')

    // Recall: the question asked is asked again; a new one being typed stays in the box
    await recall(pageB, 'scans')
    const query = pageB.getByLabel('Query', { exact: true })
    await query.fill('who is on call next')
    since = Date.now()
    await capture(pageA, 'Scans reviewed', 'Lena reviewed the scans with Tomas.', [{ name: 'Lena Fischer', type: 'person', description: 'Radiographer who takes the scans' }])
    timings.recall = await shownWithin(() => recalled(pageB), 'Lena Fischer', since)
    expect(await query.inputValue()).toBe('who is on call next')
    await env.harness.screenshot(pageB, 'live-recall')

    // an entity page gains the note that names it
    await pageB.goto(`/#/m/${encodeURIComponent(id)}/entity/${encodeURIComponent('Amara Okafor')}`)
    await expect.poll(() => backing(pageB)).toEqual(['Met Amara'])
    since = Date.now()
    await capture(pageA, 'Amara on call', 'Amara is on call on Friday.', [{ name: 'Amara Okafor', type: 'person', description: 'Cardiologist at the city clinic' }])
    timings.entity = await shownWithin(() => backing(pageB), 'Amara on call', since)
    await env.harness.screenshot(pageB, 'live-entity')

    // and a second tab of device A follows the first without any server
    const tabA2 = await env.harness.openApp(`/#/m/${encodeURIComponent(id)}/notes`)
    await expect.poll(() => noteTitles(tabA2), { timeout: 15_000 }).toContain('Amara on call')
    since = Date.now()
    await capture(pageA, 'Rota', 'Amara and Tomas swap on Friday.', [{ name: 'Friday rota', type: 'event', description: 'Swap of shifts at the clinic' }])
    timings.tab = await shownWithin(() => noteTitles(tabA2), 'Rota', since)
    // from the save on one device to the screen of another (the capture's own steps included)
    console.log(`live screens, ms from the capture's start to shown: ${JSON.stringify(timings)}`)
    expect(env.harness.pageErrors).toEqual([])
    await deviceB.close()
  })
})
