// The page is reloaded in the middle of syncing: a device writes observations offline, connects
// to a real sync server on 127.0.0.1 and keeps writing, updating and deleting, and the page is
// reloaded mid-stream (the worker and its socket die with it). After reopening: every
// acknowledged op is there, the graph equals a re-derivation, and a second device (another
// browser profile) converges to the same observations through the server.
import { mkdtempSync, rmSync } from 'node:fs'
import { createConnection, createServer, type AddressInfo, type Server, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import * as Y from 'yjs'
import { startSyncServer, type SyncServer } from '../../src/server/sync-server'
import { readMemoryDoc } from '../../src/sync/memory-doc'
import { startFaultBrowser, type FaultBrowser } from './browser'
import type { StreamOutcome } from './page/ops'
import type { StoredState } from './page/state'
import { checkAgainstAcks, entityOf, makeStream } from './stream'

let browser: FaultBrowser
let server: SyncServer
let slow: { url: string; close(): Promise<void> }
let dataDir: string

/**
 * A TCP relay to the sync server that holds every chunk for `delayMs`, like a slow network, so
 * the first sync of a device is still under way when its page reloads. Cut sockets drop what
 * they still hold.
 */
async function slowRelay(port: number, delayMs: number): Promise<{ url: string; close(): Promise<void> }> {
  const open = new Set<Socket>()
  const relay: Server = createServer((client) => {
    const upstream = createConnection(port, '127.0.0.1')
    const end = () => {
      client.destroy()
      upstream.destroy()
    }
    for (const [from, to] of [[client, upstream], [upstream, client]] as const) {
      open.add(from)
      from.on('data', (chunk) => setTimeout(() => to.writable && to.write(chunk), delayMs))
      from.on('close', end)
      from.on('error', end)
    }
  })
  await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve))
  return {
    url: `ws://127.0.0.1:${(relay.address() as AddressInfo).port}`,
    close: () => {
      for (const s of open) s.destroy()
      return new Promise((resolve) => relay.close(() => resolve()))
    },
  }
}

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'cairn-faults-sync-'))
  server = await startSyncServer({ host: '127.0.0.1', port: 0, dataDir, log: () => undefined })
  slow = await slowRelay(server.port, 250)
  browser = await startFaultBrowser()
})
afterAll(async () => {
  await browser?.close()
  await slow?.close()
  await server?.close()
  rmSync(dataDir, { recursive: true, force: true })
})

function caller(page: Page) {
  return async <T>(method: string, ...args: unknown[]): Promise<T> => {
    const r = (await page.evaluate(([m, a]) => window.cairnFaults!.call(m as never, ...(a as unknown[])), [method, args] as const)) as { value?: T; error?: { code?: string; message?: string } }
    if (r.error) throw new Error(`${method} failed: ${r.error.code ?? ''} ${r.error.message ?? ''}`)
    return r.value as T
  }
}

const offlineContent = (i: number) => `Written offline, ${i}.${' Long enough that the first sync takes a moment.'.repeat(30)}`
const same = (s: StoredState) => s.observations.map((o) => [o.slug, o.content, o.updatedAt])

describe('page reloaded in the middle of syncing', () => {
  it('keeps every acknowledged op, and a second device converges to the same memory', async () => {
    const deviceA = await browser.newDevice()
    const page = await deviceA.openPage()
    let call = caller(page)
    await page.evaluate(() => window.cairnFaults!.start())
    const { id, token: local } = await call<{ id: string; token: string }>('create', 'reload')
    const { token } = server.tokens.add({ memoryId: id, tier: 'full', agent: 'fault-tests' })

    // offline: the writes wait in the local document
    const offline: string[] = []
    for (let i = 0; i < 30; i++) offline.push((await call<{ slug: string }>('write', { title: `offline note ${i}`, content: offlineContent(i), entities: [entityOf(i)] })).slug)

    // connected, with a stream of writes, updates and deletes; the page reloads after a few of
    // them, while the first sync of the offline backlog is still under way
    await call('connectServer', slow.url, token)
    const ops = makeStream(97, 60, 'online')
    const outcome = (await page.evaluate((o) => window.cairnFaults!.runUntilKill(o, { releaseAfterAcks: 3 }), ops)) as StreamOutcome
    expect(outcome.errors).toEqual([])
    await page.reload()
    await page.waitForSelector('html[data-ready="true"]')
    const atReload = await server.roomState(id)
    call = caller(page)

    // reopened as the app does, syncing with the server again
    await page.evaluate(() => window.cairnFaults!.start())
    await call('open', id, local, { serverUrl: server.url, token })
    const reopened = await call<StoredState>('readStored', id)
    // the page kept writing after reporting, so any further prefix of the stream may have landed
    const ofStream = { ...reopened, observations: reopened.observations.filter((o) => !offline.includes(o.slug)) }
    expect(checkAgainstAcks(ops, outcome.acks, ops.length, ofStream)).toEqual([])
    expect(reopened.observations.filter((o) => offline.includes(o.slug)).map((o) => o.content)).toEqual(offline.map((_, i) => offlineContent(i)).sort())
    const engine = await call<{ engine: string; derivedFromRows: string }>('engineMatchesStore')
    expect(engine.engine).toBe(engine.derivedFromRows)
    await expect.poll(async () => (await call<{ state: string } | null>('syncView'))?.state, { timeout: 15_000 }).toBe('online')
    await call('settled')
    const a = await call<StoredState>('readStored', id)
    const serverHad = atReload ? (() => {
      const doc = new Y.Doc()
      Y.applyUpdate(doc, atReload)
      return readMemoryDoc(doc).observations
    })() : new Map()
    const behind = a.observations.filter((o) => JSON.stringify(serverHad.get(o.slug)) !== JSON.stringify(o)).length
    console.info(`reload after ${outcome.acks.length} acknowledged ops; the server lacked ${behind} of ${a.observations.length} observations (or their latest version) at that moment`)
    expect(behind, 'the reload did not interrupt a sync').toBeGreaterThan(0)

    // a second device joins through the server and ends with exactly these observations
    const deviceB = await browser.newDevice()
    const pageB = await deviceB.openPage()
    const callB = caller(pageB)
    await pageB.evaluate(() => window.cairnFaults!.start())
    await callB('join', id, { serverUrl: server.url, token })
    await expect
      .poll(async () => {
        await callB('settled')
        return same(await callB<StoredState>('readStored', id))
      }, { timeout: 15_000, interval: 200 })
      .toEqual(same(a))
    const b = await callB<StoredState>('readStored', id)
    expect(b.rows).toBe(b.derived)
    expect(b.rows).toBe(a.rows)
    const word = a.observations[0]!.entities[0]!.description.split(' ')[3]!
    expect(await callB<string[]>('recall', word)).toEqual(await call<string[]>('recall', word))

    // and what B writes now reaches A
    const fromB = await callB<{ slug: string }>('write', { title: 'from device B', content: 'Written on B after joining.', entities: [entityOf(3)] })
    await expect.poll(async () => (await call<StoredState>('readStored', id)).observations.some((o) => o.slug === fromB.slug), { timeout: 15_000 }).toBe(true)
    await call('close')
    await callB('close')
    expect(browser.pageErrors).toEqual([])
  })
})
