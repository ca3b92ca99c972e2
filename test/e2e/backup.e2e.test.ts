// Backing a memory up and moving it: export on one device through the download the app
// offers, import the file on another device, and recall what was captured.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { readFile } from 'node:fs/promises'
import type { Page } from 'playwright-core'
import { startHarness, type Harness } from './harness'
import { createMemory, openFullForm, openMemoryMenu, recall } from './ui'

describe('memory backup in the app', () => {
  let harness: Harness

  beforeAll(async () => {
    harness = await startHarness()
  })
  afterAll(async () => {
    await harness?.close()
  })

  it('exports a memory as a download and imports it on another device', async () => {
    const page = await harness.openApp('/')
    await createMemory(page, 'Field notes')
    await page.getByLabel('Title').fill('Harbour survey')
    await page.getByLabel('Note', { exact: true }).fill('Tomasz Wierzbicki surveyed the old harbour wall in spring.')
    await openFullForm(page)
    const row = page.getByTestId('entity-row').first()
    await row.getByLabel('Name').fill('Tomasz Wierzbicki')
    await row.getByLabel('Type').fill('person')
    await row.getByLabel('Description (required)').fill('Surveyor who mapped the harbour wall')
    await page.getByLabel('Title').press('Control+Enter')
    const slug = (await page.getByTestId('written-slug').textContent())?.trim() ?? ''
    expect(slug).not.toBe('')

    await openMemoryMenu(page)
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('export-backup').click()])
    expect(download.suggestedFilename()).toBe('Field-notes.cairn.json')
    const path = await download.path()
    const backup = JSON.parse(await readFile(path, 'utf8'))
    expect(backup.format).toBe('cairn-memory@1')
    expect(backup.observations.map((o: { slug: string }) => o.slug)).toEqual([slug])
    expect(JSON.stringify(backup)).not.toContain('tokenHash')

    const other = await harness.newIsolatedContext()
    const page2 = await other.openApp('/')
    // a fresh profile starts its engine worker cold, which takes a while on a busy machine
    await expect.poll(() => page2.getByText('No memories yet').isVisible(), { timeout: 20_000 }).toBe(true)
    // a file that is not a backup is refused with the engine's reason, and nothing is created
    await page2.getByTestId('import-backup').setInputFiles({ name: 'bad.cairn.json', mimeType: 'application/json', buffer: Buffer.from('{"format":"other"}') })
    await expect.poll(() => page2.getByRole('alert').textContent()).toContain('invalid_request')
    expect(await page2.getByTestId('memory-list').locator('li').count()).toBe(0)

    await page2.getByTestId('import-backup').setInputFiles(path)
    // the import says what it brought in
    await expect.poll(() => page2.getByTestId('import-summary').textContent()).toContain('Imported “Field notes”: 1 note, 1 entity, 0 files.')
    expect(await page2.getByTestId('import-summary').getByRole('link', { name: 'Open it' }).getAttribute('href')).toMatch(/\/notes$/)
    // the same backup again is not silently a second memory: declining the question imports nothing
    page2.once('dialog', (d) => void d.dismiss())
    await page2.getByTestId('import-backup').setInputFiles(path)
    await expect.poll(() => page2.getByRole('alert').textContent()).toContain('already on this device')
    expect(await page2.getByTestId('memory-list').locator(':scope > li').count()).toBe(1)
    await harness.screenshot(page2, 'backup-imported')
    await page2.getByTestId('memory-list').getByRole('link', { name: 'Field notes' }).click()
    await page2.getByTestId('memory-name').waitFor()
    expect(await page2.getByTestId('memory-name').textContent()).toBe('Field notes')
    expect(await recall(page2, 'harbour surveyor')).toContain('Tomasz Wierzbicki')

    // rename, then delete with the offer to export first
    await page2.getByRole('link', { name: 'All memories' }).click()
    await page2.getByRole('button', { name: 'Rename Field notes' }).click()
    await page2.getByLabel('New name for “Field notes”').fill('Harbour survey notes')
    await page2.getByRole('button', { name: 'Save name' }).click()
    // the rename's own answer first (a failure shows what the alerts say), then the list
    const renamed = page2.getByTestId('memory-list-status')
    await expect.poll(async () => ((await renamed.count()) ? renamed.textContent() : (await page2.getByRole('alert').allTextContents()).join(' | '))).toBe('Renamed to “Harbour survey notes”.')
    await expect.poll(() => page2.getByTestId('memory-list').locator('strong').allTextContents()).toEqual(['Harbour survey notes'])
    await page2.getByRole('button', { name: 'Delete Harbour survey notes…' }).click()
    const confirmation = page2.getByTestId('delete-confirmation')
    await expect.poll(() => confirmation.textContent()).toContain('with its 1 note')
    const [again] = await Promise.all([page2.waitForEvent('download'), confirmation.getByRole('button', { name: 'Export a backup first' }).click()])
    expect(again.suggestedFilename()).toBe('Harbour-survey-notes.cairn.json')
    await harness.screenshot(page2, 'memory-delete-confirmation')
    await confirmation.getByRole('button', { name: 'Delete “Harbour survey notes”' }).click()
    await expect.poll(() => page2.getByTestId('memory-list-status').textContent()).toBe('Deleted “Harbour survey notes” from this device.')
    // the message shows as the delete finishes; the list is read again after it
    await expect.poll(() => page2.getByTestId('memory-list').locator(':scope > li').count()).toBe(0)
    // and after a reload it stays gone
    await page2.reload()
    await page2.waitForSelector('html[data-ready="true"]')
    await expect.poll(() => page2.getByText('No memories yet').isVisible()).toBe(true)
    expect(harness.pageErrors).toEqual([])
  })
})
