// Sync as people use it: two browser profiles (separate storage) on the built app converge
// through a real sync server on 127.0.0.1, and two tabs of one profile converge through the
// tab channel with no server at all.
import { describe, expect, it } from 'vitest'
import { recallUntil, serverAndBrowser } from './server-and-browser'
import { capture, connectToServer, createMemory, openMemoryMenu, openMemorySettings, recall, joinMemory } from './ui'
import { WebSocket } from 'ws'
import { connectMemoryDoc } from '../../src/sync/client'
import { CLOSE } from '../../src/sync/close-codes'
import { createMemoryDoc, readMemoryDoc } from '../../src/sync/memory-doc'
import { putObservation } from '../helpers/doc-writes'
import { observation } from '../sync/fixture'

describe('sync in the browser', () => {
  const env = serverAndBrowser('sync')

  it('two devices converge through the server', async () => {
    const pageA = await env.harness.openApp('/')
    const id = await createMemory(pageA, 'Shared notes')
    await capture(pageA, 'Met Amara', 'Met Amara.', [{ name: 'Amara Okafor', type: 'person', description: 'Cardiologist at the city clinic' }])
    const { token } = env.server.tokens.add({ memoryId: id, tier: 'full', agent: 'person' })
    await connectToServer(pageA, env.server.url, token)

    const deviceB = await env.harness.newIsolatedContext()
    const pageB = await deviceB.openApp('/')
    await joinMemory(pageB, { id, shownAs: 'Shared notes', serverUrl: env.server.url, token })
    await recallUntil(pageB, 'cardiologist', 'Amara Okafor')
    await env.harness.screenshot(pageB, 'sync-device-b')

    await capture(pageB, 'Met Tomas', 'Met Tomas.', [{ name: 'Tomas Berg', type: 'person', description: 'Radiologist who reads the scans' }])
    await recallUntil(pageA, 'radiologist', 'Tomas Berg')
    await env.harness.screenshot(pageA, 'sync-device-a')
    await deviceB.close()
  })

  it('a join code brings the memory to a second device with the retrieval config it was created with', async () => {
    const pageA = await env.harness.openApp('/')
    await pageA.getByLabel('Name', { exact: true }).fill('Words only')
    await openMemorySettings(pageA)
    await pageA.getByLabel('Words only (BM25, no model)').check()
    await pageA.getByLabel('Snippet length (characters)').fill('150')
    await pageA.getByRole('button', { name: 'Create memory' }).click()
    await pageA.getByRole('heading', { name: 'Capture an observation' }).waitFor()
    expect(await pageA.getByTestId('memory-retrieval').textContent()).toContain('retrieval bm25-only')
    const id = decodeURIComponent(/#\/m\/([^/]+)/.exec(pageA.url())![1]!)
    await capture(pageA, 'Ferry times', 'The ferry leaves at nine.', [{ name: 'Harbor Ferry', type: 'vehicle', description: 'boat that crosses the bay every hour' }])
    const { token } = env.server.tokens.add({ memoryId: id, tier: 'full', agent: 'person' })
    await connectToServer(pageA, env.server.url, token)
    await openMemoryMenu(pageA)
    await pageA.getByRole('button', { name: 'Open on another device' }).click()
    const code = await pageA.getByLabel('Join code').inputValue()
    expect(code).toMatch(/^cairn-join:/)
    expect(code).not.toContain(token)

    const deviceB = await env.harness.newIsolatedContext()
    const pageB = await deviceB.openApp('/')
    await pageB.getByLabel('Join code or memory id').fill(code)
    // the code fills in the name and the server; the token is the one thing to type
    expect(await pageB.getByLabel('Shown as').inputValue()).toBe('Words only')
    expect(await pageB.getByLabel('Sync server').inputValue()).toBe(env.server.url)
    await pageB.getByLabel('Token').fill(env.server.tokens.add({ memoryId: id, tier: 'full', agent: 'phone' }).token)
    await pageB.getByRole('button', { name: 'Join and sync' }).click()
    await recallUntil(pageB, 'ferry', 'Harbor Ferry')
    expect(await pageB.getByTestId('memory-retrieval').textContent()).toContain('retrieval bm25-only')
    await pageB.getByRole('link', { name: 'All memories' }).click()
    expect(await pageB.getByTestId('retrieval-config').first().textContent()).toMatch(/bm25-only.*snippets 150 characters/s)
    await deviceB.close()
  })

  it('a connection made on the Connections screen opens the memory on the sync server with its tier, and revoking it there closes that socket', async () => {
    const page = await env.harness.openApp('/')
    const id = await createMemory(page, 'Agent-shared notes')
    await capture(page, 'Met Ines', 'Met Ines.', [{ name: 'Ines Duarte', type: 'person', description: 'Epidemiologist tracking the outbreak' }])
    await connectToServer(page, env.server.url, env.server.tokens.add({ memoryId: id, tier: 'full', agent: 'person' }).token)
    await page.getByRole('link', { name: 'Connections' }).click()
    await page.getByLabel('Agent').fill('desktop-agent')
    await page.getByLabel('Tier').selectOption('read')
    await page.getByRole('button', { name: 'Create connection' }).click()
    const token = await page.getByTestId('token-value').inputValue()
    const config = JSON.parse(await page.getByTestId('mcp-config').inputValue()) as { mcpServers: { cairn: { args: string[] } } }
    const args = config.mcpServers.cairn.args
    expect([args[args.indexOf('--server') + 1], args[args.indexOf('--memory') + 1], args[args.indexOf('--token') + 1]]).toEqual([env.server.url, id, token])

    // the agent, as the sync server sees it: the token made in the browser, with its read tier
    const doc = createMemoryDoc()
    const agent = connectMemoryDoc({ serverUrl: env.server.url, memoryId: id, token, doc, WebSocketPolyfill: WebSocket, crossTab: false, maxBackoffMs: 200 })
    try {
      // until the connection has synced from the browser to the server, the token is unknown there (4401)
      await expect.poll(async () => {
        if (agent.status.state === 'denied') agent.connect()
        return agent.status.state
      }, { timeout: 15_000, interval: 300 }).toBe('online')
      await expect.poll(() => [...readMemoryDoc(doc).observations.values()].map((o) => o.title)).toContain('Met Ines')
      putObservation(doc, observation('from-the-agent'))
      await expect.poll(() => agent.status.refusals.map((r) => r.code)).toEqual(['read_only'])

      await page.getByRole('button', { name: 'Revoke desktop-agent' }).click()
      await expect.poll(() => agent.status.closed?.code, { timeout: 15_000 }).toBe(CLOSE.revoked)
    } finally {
      agent.destroy()
    }
  })

  it('two tabs of one profile converge without a server', async () => {
    const tab1 = await env.harness.openApp('/')
    const id = await createMemory(tab1, 'Tab notes')
    const tab2 = await env.harness.openApp(`/#/m/${encodeURIComponent(id)}/recall`)
    await tab2.getByTestId('sync-state').waitFor({ state: 'attached' })
    await capture(tab1, 'Seen in tab one', 'Seen in tab one.', [{ name: 'Lena Fischer', type: 'person', description: 'Pharmacist on the night shift' }])
    await recallUntil(tab2, 'pharmacist', 'Lena Fischer')
    await capture(tab2, 'Seen in tab two', 'Seen in tab two.', [{ name: 'Omar Haddad', type: 'person', description: 'Paramedic on the ambulance crew' }])
    await recallUntil(tab1, 'paramedic', 'Omar Haddad')
  })

  it('left no page errors', () => {
    expect(env.harness.pageErrors).toEqual([])
  })
})
