// The appendix and connection screens in Chromium: files go through a real file input into
// IndexedDB and back out as a download; a connection's token is shown once and can be revoked.
import { readFile } from 'node:fs/promises'
import { crc32, deflateSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Page } from 'playwright-core'
import { startHarness, type Harness } from './harness'
import { createMemory } from './ui'

// bytes that survive no accidental text round trip: a NUL, invalid UTF-8, and a CRLF
const NOTES = Buffer.concat([Buffer.from('Intake checklist\r\n1. Badge\n'), Buffer.from([0x00, 0xff, 0xfe, 0x80]), Buffer.from('\nend')])
const TEXT = 'Shift rota\nMonday: <b>Amara</b> & Lee\n'

/** A solid-colour RGB PNG of the given size, so the preview has a real image to decode. */
function png(width: number, height: number): Buffer {
  const chunk = (type: string, data: Buffer): Buffer => {
    const body = Buffer.concat([Buffer.from(type, 'ascii'), data])
    const out = Buffer.alloc(body.length + 8)
    out.writeUInt32BE(data.length, 0)
    body.copy(out, 4)
    out.writeUInt32BE(crc32(body), body.length + 4)
    return out
  }
  const header = Buffer.alloc(13)
  header.writeUInt32BE(width, 0)
  header.writeUInt32BE(height, 4)
  header.set([8, 2, 0, 0, 0], 8) // 8-bit depth, RGB, no interlace
  const row = Buffer.concat([Buffer.from([0]), Buffer.alloc(width * 3, 0x4a)])
  const pixels = deflateSync(Buffer.concat(Array.from({ length: height }, () => row)))
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', header), chunk('IDAT', pixels), chunk('IEND', Buffer.alloc(0))])
}

/** Whether the token is anywhere on the page: in its text or in any field's current value. */
const showsToken = (page: Page, token: string): Promise<boolean> =>
  page.evaluate((t) => document.body.innerText.includes(t) || [...document.querySelectorAll('input')].some((i) => i.value === t), token)

describe('Cairn app, files and connections', () => {
  let harness: Harness
  let page: Page

  beforeAll(async () => {
    harness = await startHarness()
    page = await harness.openApp('/')
    await createMemory(page, 'Ward files')
  })
  afterAll(async () => {
    await harness?.close()
  })

  it('stores a file from the file input and downloads the same bytes', async () => {
    await page.getByRole('link', { name: 'Files', exact: true }).click()
    await page.getByRole('heading', { name: 'Files' }).waitFor()
    expect(await page.getByTestId('file-list').textContent()).toContain('No files yet.')

    await page.getByLabel('File', { exact: true }).setInputFiles({ name: 'intake.bin', mimeType: 'application/octet-stream', buffer: NOTES })
    // the chosen file's name becomes the path; a folder is typed in front of it
    expect(await page.getByLabel('Path').inputValue()).toBe('intake.bin')
    await page.getByLabel('Path').fill('sources/intake.bin')
    await page.getByLabel('Description').fill('scanned intake checklist')
    await page.getByRole('button', { name: 'Store file' }).click()
    await expect.poll(() => page.getByTestId('files-status').textContent()).toBe(`Stored sources/intake.bin (${NOTES.length} B).`)

    const card = page.getByTestId('file-list').locator('li.card', { hasText: 'sources/intake.bin' })
    expect(await card.textContent()).toContain('scanned intake checklist')
    expect(await card.textContent()).toContain('application/octet-stream')

    const [download] = await Promise.all([page.waitForEvent('download'), card.getByRole('button', { name: 'Download sources/intake.bin' }).click()])
    expect(download.suggestedFilename()).toBe('intake.bin')
    const saved = await download.path()
    expect(Buffer.compare(await readFile(saved), NOTES)).toBe(0)
    await harness.screenshot(page, 'screens-files')
  })

  it('previews a text file as text, never as markup', async () => {
    await page.getByLabel('File', { exact: true }).setInputFiles({ name: 'rota.txt', mimeType: 'text/plain', buffer: Buffer.from(TEXT) })
    await page.getByRole('button', { name: 'Store file' }).click()
    await expect.poll(() => page.getByTestId('files-status').textContent()).toContain('Stored rota.txt')
    await page.getByRole('button', { name: 'Preview rota.txt' }).click()
    const preview = page.getByTestId('file-preview')
    await expect.poll(() => preview.locator('pre').textContent()).toBe(TEXT)
    expect(await preview.locator('b').count()).toBe(0)
    // the file form is empty again, ready for the next one
    expect(await page.getByLabel('Path').inputValue()).toBe('')
    await harness.screenshot(page, 'screens-files-preview')
  })

  it('previews an image from its stored bytes', async () => {
    await page.getByLabel('File', { exact: true }).setInputFiles({ name: 'badge.png', mimeType: 'image/png', buffer: png(24, 12) })
    await page.getByLabel('Description').fill('staff badge')
    await page.getByRole('button', { name: 'Store file' }).click()
    await expect.poll(() => page.getByTestId('files-status').textContent()).toContain('Stored badge.png')
    await page.getByRole('button', { name: 'Preview badge.png' }).click()
    const img = page.getByTestId('file-preview').getByRole('img', { name: 'staff badge' })
    await img.waitFor()
    expect(await img.getAttribute('src')).toMatch(/^blob:/)
    await expect.poll(() => img.evaluate((el) => [(el as HTMLImageElement).naturalWidth, (el as HTMLImageElement).naturalHeight])).toEqual([24, 12])
  })

  it('refuses a second file at a taken path with the engine\'s message', async () => {
    await page.getByLabel('File', { exact: true }).setInputFiles({ name: 'rota.txt', mimeType: 'text/plain', buffer: Buffer.from('other') })
    await page.getByRole('button', { name: 'Store file' }).click()
    const alert = page.getByRole('alert')
    await alert.waitFor()
    expect(await alert.textContent()).toBe('an appendix file already exists at "rota.txt"; choose another path (conflict)')
    expect(await page.getByTestId('file-list').locator('li.card').count()).toBe(3)
  })

  it('creates a read connection, shows its token once, and revokes it', async () => {
    await page.getByRole('link', { name: 'Connections' }).click()
    await page.getByRole('heading', { name: 'Connections' }).waitFor()
    const list = page.getByTestId('connection-list')
    // the app's own connection is listed but cannot be revoked from here
    const own = list.locator('li.card', { hasText: '(this app)' })
    await own.waitFor()
    expect(await own.getByRole('button', { name: /Revoke/ }).count()).toBe(0)

    await page.getByLabel('Agent').fill('night-shift-bot')
    await page.getByLabel('Tier').selectOption('read')
    await page.getByRole('button', { name: 'Create connection' }).click()
    const issued = page.getByTestId('issued-token')
    await issued.waitFor()
    expect(await issued.textContent()).toContain("won't be shown again")
    const token = await page.getByTestId('token-value').inputValue()
    expect(token.length).toBeGreaterThanOrEqual(32)
    expect(await showsToken(page, token)).toBe(true)
    await harness.device.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: new URL(harness.baseUrl).origin })
    await issued.getByRole('button', { name: 'Copy token' }).click()
    await expect.poll(() => page.getByTestId('copy-status').textContent()).toBe('Copied.')
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(token)

    const bot = list.locator('li.card[data-agent="night-shift-bot"]')
    await bot.waitFor()
    expect(await bot.textContent()).toContain('tier read')
    expect(await bot.getAttribute('data-revoked')).toBe('false')
    await harness.screenshot(page, 'screens-connections-token')
    // nothing on the page but the one-time note holds the token
    await page.getByRole('button', { name: 'Done, hide it' }).click()
    expect(await showsToken(page, token)).toBe(false)

    await bot.getByRole('button', { name: 'Revoke night-shift-bot' }).click()
    await expect.poll(() => bot.getAttribute('data-revoked')).toBe('true')
    expect(await bot.getByTestId('revoked').textContent()).toMatch(/^revoked /)
    expect(await bot.getByRole('button', { name: /Revoke/ }).count()).toBe(0)
    expect(await page.getByTestId('connections-status').textContent()).toBe('Revoked night-shift-bot. Its token no longer works.')

    // after a reload the list still says revoked, and the token is still not shown anywhere
    await page.reload()
    await page.waitForSelector('html[data-ready="true"]')
    await list.locator('li.card[data-agent="night-shift-bot"][data-revoked="true"]').waitFor()
    expect(await showsToken(page, token)).toBe(false)
    await harness.screenshot(page, 'screens-connections-revoked')
  })

  it('logs no page errors', () => {
    expect(harness.pageErrors).toEqual([])
  })
})
