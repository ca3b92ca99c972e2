// Pairing a second device from the app, no terminal: two browser profiles (two fresh
// user-data-dirs) and a real sync server on 127.0.0.1 started with a claim key. The owner
// claims the memory on the server with that key, makes a join code (with its QR image and
// link), and the second profile opens the link, joins with one click and sees the owner's note.
import { describe, expect, it } from 'vitest'
import { serverAndBrowser } from './server-and-browser'
import { installToolRegistry, seed } from './seed'
import { connectToServer, createMemory, openMemoryMenu, recall } from './ui'

const CLAIM_KEY = 'cairn_claim_e2e-pairing-key-0123456789'

describe('pairing a device from the app', () => {
  const env = serverAndBrowser('pairing', { claimKey: CLAIM_KEY }, (harness) => installToolRegistry(harness.device.context))

  it('the owner claims the memory with the server key, makes a join code, and the second profile joins with it and sees the note', async () => {
    const owner = await env.harness.openApp('/')
    const id = await createMemory(owner, 'Household')
    await seed(owner, [{
      title: 'Boiler service',
      content: 'Priya Nair services the boiler every October.',
      entities: [{ name: 'Priya Nair', type: 'person', description: 'Heating engineer who services the boiler' }],
    }])
    // first time on this server: the claim key in the token field, no `token add`
    await connectToServer(owner, env.server.url, CLAIM_KEY)
    expect(env.server.tokens.list(id).map((c) => c.tier)).toEqual(['full'])

    await openMemoryMenu(owner)
    await owner.getByLabel('Device name').fill('phone')
    await owner.getByRole('button', { name: 'Open on another device' }).click()
    const code = await owner.getByLabel('Join code').inputValue()
    const link = await owner.getByLabel('Join link').inputValue()
    expect(code).toMatch(/^cairn-join:/)
    expect(link).toBe(`${env.harness.baseUrl}#/join/${code}`)
    // the QR image is drawn from a path of dark modules (a version 10+ code for a link this long)
    // this device is online, so the server already knows the new connection
    expect(await owner.getByTestId('pairing-waits').count()).toBe(0)
    const qr = owner.getByTestId('join-qr')
    await qr.waitFor()
    const viewBox = (await qr.getAttribute('viewBox'))!.split(' ').map(Number)
    expect(viewBox[2]).toBeGreaterThanOrEqual(57 + 8)
    expect((await qr.locator('path').getAttribute('d'))!.length).toBeGreaterThan(1000)
    await env.harness.screenshot(owner, 'pairing-owner-join-code')

    // the code made a connection for the phone, listed and revocable on the Connections screen
    await owner.getByRole('link', { name: 'Connections' }).click()
    await owner.locator('[data-agent="phone"]').waitFor()

    const phone = await env.harness.newIsolatedContext()
    const page = await phone.openApp(link)
    // the link filled in everything: name, server and this device's token
    expect(await page.getByLabel('Shown as').inputValue()).toBe('Household')
    expect(await page.getByLabel('Sync server').inputValue()).toBe(env.server.url)
    expect(await page.getByLabel('Token').inputValue()).not.toBe('')
    await env.harness.screenshot(page, 'pairing-phone-link-opened')
    await page.getByRole('button', { name: 'Join and sync' }).click()
    await expect.poll(() => recall(page, 'boiler'), { timeout: 20_000, interval: 400 }).toContain('Priya Nair')
    await expect.poll(() => page.getByTestId('sync-state').textContent()).toBe('Synced')
    await env.harness.screenshot(page, 'pairing-phone-joined')

    await phone.close()
  })

  it('pairing needs a server, and a claim key never takes over a memory already on it', async () => {
    const page = await env.harness.openApp('/')
    await createMemory(page, 'Second memory')
    // a memory on no server yet has nothing to pair through: said, and no code shown
    await openMemoryMenu(page)
    await page.getByRole('button', { name: 'Open on another device' }).click()
    await expect.poll(async () => (await page.getByRole('alert').allTextContents()).join(' ')).toContain('Sync this memory with a server first')
    expect(await page.getByTestId('join-code').count()).toBe(0)
    await connectToServer(page, env.server.url, CLAIM_KEY)
    const id = decodeURIComponent(/#\/m\/([^/]+)/.exec(page.url())![1]!)
    // another device trying the key for the same memory id is refused
    const answer = await fetch(env.server.url.replace(/^ws/, 'http') + '/claim', {
      method: 'POST',
      headers: { authorization: `Bearer ${CLAIM_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ memoryId: id }),
    })
    expect(answer.status).toBe(409)
  })
})
