// One sync server of a load run in a process of its own, on Redis or a data directory, or the
// plain @y/websocket-server it builds on (no tokens, checks or persistence) for comparison:
// `fork(cluster-server-process.ts, [JSON options])` with an IPC channel. It reports `ready`
// with its URL, answers `token`, `stats` (event-loop delay, memory), `revocations` and
// `close`, and exits when its parent goes away, so a failed run leaves nothing behind.
import { createServer } from 'node:http'
import { setupWSConnection } from '@y/websocket-server/utils'
import { WebSocketServer } from 'ws'
import { startSyncServer } from '../../src/server/sync-server'
import { countingLog, startMeter } from './server-handle'

export interface ClusterServerArgs {
  dataDir: string
  redis?: string
  /** The plain y-websocket server instead of Cairn's: every socket joins the room its URL names. */
  plain?: boolean
}

/** @y/websocket-server as its README runs it, on 127.0.0.1 and a free port. */
async function startPlainServer(): Promise<{ url: string; close(): Promise<void> }> {
  const http = createServer((_req, res) => res.writeHead(200).end('ok'))
  const wss = new WebSocketServer({ server: http })
  wss.on('connection', (socket, req) => setupWSConnection(socket, req))
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve))
  const address = http.address()
  const port = typeof address === 'object' && address ? address.port : 0
  return {
    url: `ws://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => {
      for (const socket of wss.clients) socket.terminate()
      wss.close()
      http.close(() => resolve())
    }),
  }
}

export type ClusterServerRequest =
  | { id: number; type: 'token'; memoryId: string; agent: string }
  | { id: number; type: 'stats' }
  | { id: number; type: 'reset' }
  | { id: number; type: 'close' }
  /** When this server closed sockets for a revocation (epoch ms, sub-millisecond, comparable across processes). */
  | { id: number; type: 'revocations' }

async function main(): Promise<void> {
  const args = JSON.parse(process.argv[2] ?? '{}') as ClusterServerArgs
  if (!args.dataDir || !process.send) throw new Error('usage: fork cluster-server-process.ts \'{"dataDir":...,"redis":...}\' with an IPC channel')
  const send = (message: unknown) => process.send!(message)
  const counting = countingLog((line) => send({ type: 'log', line }))
  const revokedAt: number[] = []
  const log: typeof counting.log = (level, event, fields) => {
    if (event === 'connection_revoked') revokedAt.push(performance.timeOrigin + performance.now())
    counting.log(level, event, fields)
  }
  const count = counting.count
  const server = args.plain ? { ...(await startPlainServer()), access: null } : await startSyncServer({ dataDir: args.dataDir, port: 0, log, redis: args.redis })
  const meter = startMeter()
  process.once('disconnect', () => {
    meter.stop()
    void server.close().finally(() => process.exit(0))
  })
  process.on('message', (m: ClusterServerRequest) => {
    void (async () => {
      try {
        if (m.type === 'token') {
          // the plain server has no tokens: its sockets need none
          const token = server.access ? (await server.access.add({ memoryId: m.memoryId, agent: m.agent, tier: 'read_write' })).token : ''
          send({ id: m.id, ok: true, value: token })
        }
        else if (m.type === 'reset') {
          meter.reset()
          send({ id: m.id, ok: true, value: null })
        } else if (m.type === 'stats') send({ id: m.id, ok: true, value: meter.stats(count()) })
        else if (m.type === 'revocations') send({ id: m.id, ok: true, value: revokedAt })
        else if (m.type === 'close') {
          meter.stop()
          await server.close()
          send({ id: m.id, ok: true, value: null })
          process.disconnect()
        }
      } catch (err) {
        send({ id: m.id, ok: false, error: (err as Error).message })
      }
    })()
  })
  send({ type: 'ready', url: server.url })
}

main().catch((err: unknown) => {
  console.error(err)
  process.exit(1)
})
