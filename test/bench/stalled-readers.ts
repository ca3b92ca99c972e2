// The sync server, in a process of its own, with a room of about 10 MB, while 40 read sockets
// each ask for the whole room (an empty state vector) and then stop reading: the server's RSS
// before, while they hang, after the owner writes about 1 MB more, and after they close.
// Alone: `npx tsx test/bench/stalled-readers.ts [--quick]` (writes bench/results/stalled-readers.json).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import type { Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import * as encoding from 'lib0/encoding'
import { WebSocket } from 'ws'
import * as syncProtocol from 'y-protocols/sync'
import { connectMemoryDoc, type SyncClient } from '../../src/sync/client'
import { applyMemoryWrites, createMemoryDoc, readMemoryDoc } from '../../src/sync/memory-doc'
import { serverInChild, type ServerHandle } from '../load/server-handle'
import { observation, waitFor } from '../sync/fixture'

const ROOM = 'bench-stalled'
const MiB = 1024 * 1024
const round = (x: number, d = 1) => Math.round(x * 10 ** d) / 10 ** d
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

export interface StalledReadersResult {
  roomMiB: number
  sockets: number
  rssStartMiB: number
  /** Highest RSS while the sockets hung, and after the owner's extra writes. */
  rssStalledPeakMiB: number
  rssAfterWritesPeakMiB: number
  rssAfterCloseMiB: number
  /** Goals: under +64 MiB while stalled; back within 10% of the start after they close. */
  stalledGrowthMiB: number
  backWithinPercent: number
  socketsDroppedByServer: number
}

function client(server: ServerHandle, token: string): SyncClient {
  return connectMemoryDoc({ serverUrl: server.url, memoryId: ROOM, token, doc: createMemoryDoc(), WebSocketPolyfill: WebSocket, crossTab: false, maxBackoffMs: 200 })
}

function step1(): Uint8Array {
  const e = encoding.createEncoder()
  encoding.writeVarUint(e, 0)
  syncProtocol.writeSyncStep1(e, createMemoryDoc())
  return encoding.toUint8Array(e)
}

export async function benchStalledReaders(quick: boolean): Promise<StalledReadersResult> {
  const notes = quick ? 2_000 : 10_000
  const sockets = 40
  const dataDir = mkdtempSync(join(tmpdir(), 'cairn-stalled-'))
  const server = await serverInChild(dataDir, () => {})
  const open: WebSocket[] = []
  try {
    const writer = client(server, await server.addToken(ROOM, 'read_write', 'seed'))
    await writer.whenSynced(120_000)
    const text = 'The harbour crew met about the winter schedule and the new crane. '.repeat(14).trim()
    for (let i = 0; i < notes; i += 500) {
      applyMemoryWrites(writer.provider.doc, { observations: { put: Array.from({ length: Math.min(500, notes - i) }, (_, k) => observation(`seed-${i + k}`, { content: text })) } })
    }
    const watcher = client(server, await server.addToken(ROOM, 'read', 'seed-watcher'))
    await waitFor('the seed', () => readMemoryDoc(watcher.provider.doc).observations.size === notes, 300_000)
    watcher.destroy()
    const roomBytes = (await server.roomState(ROOM))!.byteLength
    await sleep(2_000)
    await server.reset()
    const start = (await server.stats()).rss

    const tokens = await Promise.all(Array.from({ length: sockets }, (_, i) => server.addToken(ROOM, 'read', `stalled-${i}`)))
    let dropped = 0
    let closing = false
    for (const token of tokens) {
      const ws = new WebSocket(`${server.url}/${ROOM}?token=${encodeURIComponent(token)}`)
      await new Promise<void>((resolve, reject) => {
        ws.once('open', () => resolve())
        ws.once('error', reject)
      })
      ws.on('close', () => {
        if (!closing) dropped++
      })
      ws.on('error', () => {})
      ws.send(step1())
      // stop reading: what the server sends waits in its buffers
      ;(ws as unknown as { _socket: Socket })._socket.pause()
      open.push(ws)
    }
    await sleep(5_000)
    const stalled = (await server.stats()).peakRss
    // the owner writes about 1 MB more, relayed to every socket of the room
    for (let i = 0; i < notes / 10; i += 100) {
      applyMemoryWrites(writer.provider.doc, { observations: { put: Array.from({ length: 100 }, (_, k) => observation(`more-${i + k}`, { content: text })) } })
      await sleep(50)
    }
    await sleep(5_000)
    const afterWrites = (await server.stats()).peakRss
    closing = true
    for (const ws of open) ws.terminate()
    writer.destroy()
    await sleep(8_000)
    const afterClose = (await server.stats()).rss
    return {
      roomMiB: round(roomBytes / MiB),
      sockets,
      rssStartMiB: round(start / MiB),
      rssStalledPeakMiB: round(stalled / MiB),
      rssAfterWritesPeakMiB: round(afterWrites / MiB),
      rssAfterCloseMiB: round(afterClose / MiB),
      stalledGrowthMiB: round((Math.max(stalled, afterWrites) - start) / MiB),
      backWithinPercent: round(((afterClose - start) / start) * 100),
      socketsDroppedByServer: dropped,
    }
  } finally {
    for (const ws of open) ws.terminate()
    await server.close()
    rmSync(dataDir, { recursive: true, force: true })
  }
}

if (process.argv[1]?.endsWith('stalled-readers.ts')) {
  benchStalledReaders(process.argv.includes('--quick')).then((r) => {
    console.table([r])
    mkdirSync('bench/results', { recursive: true })
    writeFileSync('bench/results/stalled-readers.json', JSON.stringify({ at: new Date().toISOString(), ...r }, null, 2))
  }, (err: unknown) => {
    console.error(err)
    process.exit(1)
  })
}

