// The setup the multi-device browser tests share: a real sync server on 127.0.0.1 over a fresh
// data directory, and the browser harness; both stopped, and the directory removed, after the file.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, expect } from 'vitest'
import type { Page } from 'playwright-core'
import { startSyncServer, type SyncServer, type SyncServerOptions } from '../../src/server/sync-server'
import { startHarness, type Harness } from './harness'
import { recall } from './ui'

export interface ServerAndBrowser {
  readonly harness: Harness
  readonly server: SyncServer
}

/**
 * Registers the hooks of the surrounding `describe`; the returned fields are set once its
 * `beforeAll` has run. `ready` runs after both are up (a page-wide registry, say).
 */
export function serverAndBrowser(label: string, options: Partial<SyncServerOptions> = {}, ready?: (harness: Harness) => Promise<void>): ServerAndBrowser {
  let harness: Harness | undefined
  let server: SyncServer | undefined
  let dataDir: string | undefined
  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), `cairn-e2e-${label}-`))
    server = await startSyncServer({ host: '127.0.0.1', port: 0, dataDir, log: () => undefined, ...options })
    harness = await startHarness()
    await ready?.(harness)
  })
  afterAll(async () => {
    await harness?.close()
    await server?.close()
    if (dataDir) rmSync(dataDir, { recursive: true, force: true })
  })
  const set = <T>(value: T | undefined, what: string): T => {
    if (value === undefined) throw new Error(`${what} is not up: read it inside a test, after beforeAll`)
    return value
  }
  return {
    get harness() { return set(harness, 'the browser harness') },
    get server() { return set(server, 'the sync server') },
  }
}

/** Recalls until `name` is among the ranked entities (another device's write may be in flight). */
export async function recallUntil(page: Page, query: string, name: string): Promise<void> {
  await expect.poll(() => recall(page, query), { timeout: 15_000, interval: 300 }).toContain(name)
}
