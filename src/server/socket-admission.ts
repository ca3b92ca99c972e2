// Takes a new WebSocket from the upgrade into its room: reads the memory id from the path,
// authorizes the token, bounds the connection's sockets, puts a gate before the room code, and
// checks once more after the room loads that nothing revoked the socket meanwhile.
import type { IncomingMessage } from 'node:http'
import { setupWSConnection, type WSSharedDoc } from '@y/websocket-server/utils'
import type { WebSocket } from 'ws'
import { ROOM_NAME } from '../core/identifiers'
import { CLOSE } from '../sync/close-codes'
import { revokedSince, type AuthSources } from './auth'
import type { Authorize } from './auth-result'
import type { OwnerTable } from './client-owners'
import { REVOKED_CUT, socketKey } from './cuts'
import { newBudgetWindow, type Budget, type BudgetWindow } from './connection-budget'
import { GatedSocket } from './gated-socket'
import type { RoomThread } from './room-thread'

export interface Admission extends AuthSources {
  authorize: Authorize
  owners: OwnerTable
  thread: RoomThread
  budget: Budget
  /** Budgets are per connection, so opening more sockets with one token buys nothing. */
  windows: Map<string, BudgetWindow>
  /** Every gate, until it is idle after its socket closed (a closing server waits for them). */
  gates: Set<GatedSocket>
  /** Updates are durable before they reach the room. */
  persistFirst: boolean
}

export async function admitSocket(a: Admission, ws: WebSocket, req: IncomingMessage): Promise<void> {
  const { log, rooms, cuts } = a
  ws.on('error', (err) => log('warn', 'socket_error', { error: err.message }))
  const url = new URL(req.url ?? '/', 'http://localhost')
  let room = ''
  try {
    room = decodeURIComponent(url.pathname.slice(1))
  } catch {
    // a bad percent-encoding is the client's mistake, not a transient failure
  }
  if (!ROOM_NAME.test(room)) {
    ws.close(CLOSE.badRequest, 'the path must be /<memory id>')
    return
  }
  // Messages that arrive while an asynchronous check runs are kept and replayed to the gate.
  const early: Array<[unknown, boolean]> = []
  const keep = (data: unknown, isBinary: boolean) => early.push([data, isBinary])
  ws.on('message', keep)
  const auth = await a.authorize(url.searchParams.get('token'), room)
  ws.off('message', keep)
  if (ws.readyState !== ws.OPEN) return
  if (!auth.ok) {
    log('warn', 'connection_refused', { room, code: auth.code, reason: auth.reason })
    ws.close(auth.code, auth.reason)
    return
  }
  const { connection, member } = auth
  const key = socketKey(auth, room)
  if (!cuts.admit(ws, key, room, connection, member, a.budget.socketsPerConnection)) return
  const cutNow = () => (member ? cuts.memberCut(room, member.orgId, connection.id) : null)
  let roomDoc: WSSharedDoc | undefined
  const gate = new GatedSocket(ws, {
    connection,
    room,
    log,
    // The document the socket was set up with: after the last socket closes the room is
    // unloaded, and messages this one sent before closing still go through it (and to disk).
    roomDoc: () => roomDoc,
    isRevoked: revokedSince(a, auth, room),
    onRevokedUpdate: () => {
      const cut = cutNow() ?? REVOKED_CUT
      ws.close(cut.code, cut.reason)
    },
    ownerOf: (client) => a.owners.ownerOf(room, client),
    bindClients: (clients) => a.owners.bind(room, clients, connection.id),
    persist: a.persistFirst ? (update) => rooms.persist(room, update) : null,
    syncReply: (stateVector) => (roomDoc ? a.thread.syncReply(room, roomDoc, stateVector) : Promise.resolve(null)),
    budget: a.budget,
    window: a.windows.get(key) ?? a.windows.set(key, newBudgetWindow(a.budget)).get(key)!,
    onClose: (code, reason) => ws.close(code, reason),
  })
  a.gates.add(gate)
  ws.on('close', () => {
    void gate.idle().then(() => a.gates.delete(gate))
  })
  for (const [data, isBinary] of early) ws.emit('message', data, isBinary)
  try {
    await rooms.ensureLoaded(room)
  } catch (err) {
    log('error', 'room_load_failed', { room, error: (err as Error).message })
    ws.close(CLOSE.unavailable, 'the room could not be loaded; try again later')
    return
  }
  if (ws.readyState !== ws.OPEN) return
  setupWSConnection(gate as unknown as WebSocket, req, { docName: rooms.docName(room), gc: true })
  roomDoc = rooms.live(room)
  // authorized from stored state that a revoke (made on another server) may have overtaken
  const cut = auth.shared && cuts.revokedInRoom(room, connection.id) ? REVOKED_CUT : cutNow()
  if (cut) {
    ws.close(cut.code, cut.reason)
    return
  }
  gate.start()
  log('info', 'connected', { room, connection: connection.id, agent: connection.agent, tier: connection.tier })
}
