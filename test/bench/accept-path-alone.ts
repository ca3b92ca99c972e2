// `npx tsx test/bench/accept-path-alone.ts [updates]`: the CPU the sync server's event loop spends
// on one accepted update apart from sockets and disk: judging it against the room's kept copy
// (screen, value checks, the copy's apply) and applying it to the room, whose update listener
// frames it once for the peers as the room code does. The updates are the saturation bench's
// observations, from 30 writers over 10 rooms, so a run of both trees compares the two paths.
import * as Y from 'yjs'
import { checkUpdate, trackInFlight } from '../../src/server/update-policy'
import { createMemoryDoc } from '../../src/sync/memory-doc'
import { putObservation } from '../helpers/doc-writes'
import { loadObservation } from '../load/sync-cluster'

const count = Number(process.argv[2] ?? 6_000)
const rooms = Array.from({ length: 10 }, () => createMemoryDoc())
for (const room of rooms) {
  room.on('update', (u: Uint8Array) => {
    // a relay's framing: one message for every peer
    const message = new Uint8Array(u.byteLength + 3)
    message.set(u, 3)
  })
}
const writers = rooms.flatMap((_, room) => Array.from({ length: 3 }, (_, k) => ({ room, doc: createMemoryDoc(), connection: `connection-${room}-${k}` })))
const owners = new Map<number, string>()
for (const w of writers) owners.set(w.doc.clientID, w.connection)

const updates = Array.from({ length: count }, (_, i) => {
  const w = writers[i % writers.length]!
  let update: Uint8Array | undefined
  const keep = (u: Uint8Array) => (update = u)
  w.doc.on('update', keep)
  putObservation(w.doc, loadObservation(`m${w.room}`, i % writers.length, i))
  w.doc.off('update', keep)
  return { room: rooms[w.room]!, connection: w.connection, update: update! }
})

const from = process.cpuUsage()
let accepted = 0
for (const { room, connection, update } of updates) {
  const verdict = checkUpdate('read_write', room, update, { connectionId: connection, ownerOf: (client) => owners.get(client), claimsLeft: 16 })
  if (!verdict.ok || verdict.noop) continue
  accepted++
  const flight = trackInFlight(room)
  flight.arrive(() => Y.applyUpdate(room, verdict.update ?? update, 'socket'))
  flight.done()
}
const cpu = process.cpuUsage(from)
console.log(`${accepted} of ${count} updates accepted; ${((cpu.user + cpu.system) / count).toFixed(1)} µs of CPU per update (judging and the room's apply)`)
