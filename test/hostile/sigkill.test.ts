// The server is killed with SIGKILL at random points while a device writes, then restarted
// on the same data directory. The promise: every update any peer received from the server
// was on disk first, so it is still there after the restart.
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import { WebSocket } from 'ws'
import { TokenRegistry } from '../../src/server/token-registry'
import { connectMemoryDoc, type SyncClient } from '../../src/sync/client'
import { createMemoryDoc } from '../../src/sync/memory-doc'
import { putObservation } from '../helpers/doc-writes'
import { observation, waitFor } from '../sync/fixture'
import { slugs } from './peer'

const SCRIPT = fileURLToPath(new URL('./server-process.ts', import.meta.url))
const cleanups: Array<() => void> = []
afterEach(() => {
  for (const c of cleanups.splice(0)) c()
})

async function startServer(dataDir: string, port = 0): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(process.execPath, ['--import', 'tsx', SCRIPT, dataDir, String(port)], { stdio: ['ignore', 'pipe', 'inherit'] })
  cleanups.push(() => child.kill('SIGKILL'))
  const listening = await new Promise<number>((resolve, reject) => {
    let out = ''
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString()
      const m = /listening (\d+)/.exec(out)
      if (m) resolve(Number(m[1]))
    })
    child.once('exit', (code) => reject(new Error(`server exited (${code})`)))
  })
  return { child, port: listening }
}

function client(port: number, token: string): SyncClient {
  const c = connectMemoryDoc({ serverUrl: `ws://127.0.0.1:${port}`, memoryId: 'mem-k', token, doc: createMemoryDoc(), WebSocketPolyfill: WebSocket, crossTab: false, maxBackoffMs: 100 })
  cleanups.push(() => c.destroy())
  return c
}

describe('SIGKILL under load', () => {
  it('loses no update a peer received, at three random kill points', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'cairn-kill-'))
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }))
    const registry = new TokenRegistry(join(dataDir, 'tokens.json'))
    const writerToken = registry.add({ memoryId: 'mem-k', tier: 'read_write', agent: 'writer' }).token
    const readToken = registry.add({ memoryId: 'mem-k', tier: 'read', agent: 'watcher' }).token
    let seed = 12345
    const rand = () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32)

    let { child, port } = await startServer(dataDir)
    for (let round = 0; round < 3; round++) {
      const writer = client(port, writerToken)
      const watcher = client(port, readToken)
      await Promise.all([writer.whenSynced(), watcher.whenSynced()])
      // kill once the watcher holds a random number of this round's notes, while writes go on
      const target = slugs(watcher.provider.doc).length + 10 + Math.floor(rand() * 60)
      let written = 0
      const stop = setInterval(() => {
        for (let i = 0; i < 5; i++) putObservation(writer.provider.doc, observation(`r${round}-${String(written++).padStart(4, '0')}`))
      }, 2)
      await waitFor('the kill point', () => slugs(watcher.provider.doc).length >= target, 20_000)
      child.kill('SIGKILL')
      clearInterval(stop)
      const received = slugs(watcher.provider.doc)
      writer.destroy()
      watcher.destroy()
      await new Promise((r) => child.once('exit', r))
      ;({ child, port } = await startServer(dataDir, port))
      const fresh = client(port, readToken)
      await fresh.whenSynced()
      const stored = new Set(slugs(fresh.provider.doc))
      expect(received.filter((s) => !stored.has(s))).toEqual([])
      fresh.destroy()
    }
    child.kill('SIGKILL')
  }, 60_000)
})
