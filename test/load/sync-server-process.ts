// The sync server in a process of its own, for the load run: started with a data directory,
// driven over the IPC channel (tokens, figures, room state, close). It exits when its parent
// goes away, so a failed run leaves nothing behind.
import { startSyncServer } from '../../src/server/sync-server'
import { countingLog, startMeter, type ChildServerOptions, type ServerRequest } from './server-handle'

async function main(): Promise<void> {
  const dataDir = process.argv[2]
  if (!dataDir || !process.send) throw new Error('usage: fork sync-server-process.ts <dataDir> with an IPC channel')
  const send = (message: unknown) => process.send!(message)
  const { log, count } = countingLog((line) => send({ type: 'log', line }))
  // optional second argument: JSON of extra server options (the bench compares persistence orders)
  const extra = process.argv[3] ? (JSON.parse(process.argv[3]) as ChildServerOptions) : {}
  const server = await startSyncServer({ dataDir, port: 0, log, ...extra })
  const meter = startMeter()
  process.once('disconnect', () => {
    meter.stop()
    void server.close().finally(() => process.exit(0))
  })
  process.on('message', (m: ServerRequest) => {
    void (async () => {
      try {
        if (m.type === 'token') send({ id: m.id, ok: true, value: server.tokens.add({ memoryId: m.memoryId, tier: m.tier, agent: m.agent }).token })
        else if (m.type === 'reset') {
          meter.reset()
          send({ id: m.id, ok: true, value: null })
        } else if (m.type === 'stats') send({ id: m.id, ok: true, value: meter.stats(count()) })
        else if (m.type === 'roomState') {
          const state = await server.roomState(m.room)
          send({ id: m.id, ok: true, value: state ? Buffer.from(state).toString('base64') : null })
        } else if (m.type === 'close') {
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
