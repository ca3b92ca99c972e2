// One sync server of a load run in a process of its own, on Redis or a data directory:
// `fork(cluster-server-process.ts, [JSON options])` with an IPC channel. It reports `ready`
// with its URL, answers `token`, `stats` (event-loop delay, memory), `revocations` and
// `close`, and exits when its parent goes away, so a failed run leaves nothing behind.
import { startSyncServer } from '../../src/server/sync-server'
import { countingLog, startMeter } from './server-handle'

export interface ClusterServerArgs {
  dataDir: string
  redis?: string
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
  const server = await startSyncServer({ dataDir: args.dataDir, port: 0, log, redis: args.redis })
  const meter = startMeter()
  process.once('disconnect', () => {
    meter.stop()
    void server.close().finally(() => process.exit(0))
  })
  process.on('message', (m: ClusterServerRequest) => {
    void (async () => {
      try {
        if (m.type === 'token') send({ id: m.id, ok: true, value: (await server.access.add({ memoryId: m.memoryId, agent: m.agent, tier: 'read_write' })).token })
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
