// A sync server in a process of its own, for tests that kill it: `node --import tsx
// server-process.ts <dataDir> <port>`; prints `listening <port>` once it accepts sockets.
import { startSyncServer } from '../../src/server/sync-server'
import { silentLog } from '../../src/server/log'

const [dataDir, port] = process.argv.slice(2)
// HOSTILE_RELAY_FIRST=1 runs the server as it was before updates were stored first, to show the test catches it
const server = await startSyncServer({ dataDir: dataDir!, port: Number(port ?? 0), log: silentLog, persistBeforeBroadcast: process.env.HOSTILE_RELAY_FIRST !== '1' })
process.stdout.write(`listening ${server.port}\n`)
