// Stands between a client's WebSocket and @y/websocket-server's room handling: it looks like
// the socket to the room code, but lets a message through only after the connection's tier
// allows it. Sync step 1 (a state vector) is answered with what the client lacks, computed off
// the event loop when the server can; awareness is dropped (a memory has no
// presence to share, and relaying it let one socket fill every peer's memory); every update
// (sync step 2 or update) is checked against the room first, put on disk, and only then
// reaches the room and its peers. A refused one never reaches the room: the client gets a
// refusal frame instead. Messages of one socket are handled one at a time, in order, within
// a budget of bytes and refusals per minute shared by every socket of the same connection.
import { EventEmitter } from 'node:events'
import * as decoding from 'lib0/decoding'
import type { WebSocket } from 'ws'
import * as syncProtocol from 'y-protocols/sync'
import * as Y from 'yjs'
import type { ConnectionRecord } from '../core/types'
import { CLOSE } from '../sync/close-codes'
import { encodeRefusal, type Refusal } from '../sync/refusal'
import type { SyncLog } from './log'
import { fitsOneMessage } from '../sync/update-split'
import { BYTES_PER_STRUCT_READ, COSTLY_NOOP_STRUCTS, countRefusals, LARGE_NOOP_BYTES, PacedReader, type Budget, type BudgetWindow } from './connection-budget'
import { checkUpdate, trackInFlight } from './update-policy'

const MESSAGE_SYNC = 0
/** Updates that arrive before the sync step 2 they build on wait, up to this size and age. */
const MAX_HELD_BYTES = 4 * 1024 * 1024
const MAX_HELD_MS = 10_000
/** How long a socket the server gave up on has for its close frame to leave before it is ended. */
const CLOSE_GRACE_MS = 1_000

export interface GateContext {
  connection: ConnectionRecord
  room: string
  log: SyncLog
  /** The live room document; present once the room is set up. */
  roomDoc: () => Y.Doc | undefined
  /** Re-checked on every update, so a revoke that has not closed the socket yet still bites. */
  isRevoked: () => boolean
  onRevokedUpdate: () => void
  /** The connection a Yjs client id of this room belongs to. */
  ownerOf: (client: number) => string | undefined
  /** Binds client ids to this connection at once; resolves when that is durable. */
  bindClients: (clients: number[]) => Promise<void>
  /**
   * Makes an accepted update durable (RoomStore.persist, or an append and its group commit)
   * before the room, its peers or any sync reply see it; null to let the room store it after.
   */
  persist: ((update: Uint8Array) => Promise<void>) | null
  /**
   * The answer to a client's state vector (its sync step 1): what the room holds beyond it, as
   * the messages of sync/first-sync.ts, computed off this thread and shared with other sockets
   * (never changed here); null (or absent) lets the room code answer.
   */
  syncReply?: (stateVector: Uint8Array) => Promise<Uint8Array[] | null>
  budget: Budget
  /** This connection's spending, shared by its sockets. */
  window: BudgetWindow
  /** Called when the socket went over budget or storage failed; the socket is closed. */
  onClose: (code: number, reason: string) => void
}

/** Client ids one socket may start: a device session uses one, its other tabs a few more. */
const CLAIMS_PER_SOCKET = 16


/** How long one piece of a sync answer may wait to leave for a peer before the peer is dropped. */
const REPLY_STALL_MS = 60_000

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve))

export class GatedSocket extends EventEmitter {
  private queue: Uint8Array[] | null = []
  /**
   * Accepted updates reach the room in the order they arrived, each once it is on disk.
   * Checking does not wait for disk: the room copy already holds the accepted ones, so the
   * next update is judged at once and its append joins the same group commit.
   */
  private delivered: Promise<void> = Promise.resolve()
  /** Updates that depend on history the room lacks, merged, waiting for the rest. */
  private held: { update: Uint8Array; since: number } | null = null
  private sawStep2 = false
  private claims = 0
  /** Set when the server gave up on this socket (over budget, storage failed): later messages are dropped. */
  private closed = false
  private storeFailed = false
  binaryType = 'arraybuffer'

  /** Received messages not judged yet, judged one per turn within the connection's byte budget. */
  private readonly reader: PacedReader

  /** The connection this socket speaks for. */
  get connection(): ConnectionRecord {
    return this.ctx.connection
  }

  constructor(readonly ws: WebSocket, private readonly ctx: GateContext) {
    super()
    this.reader = new PacedReader(ws, ctx.budget, ctx.window, (message) => this.receive(message), () => this.closed)
    // Buffers as received: an ArrayBuffer per message would copy every byte once more.
    ws.binaryType = 'nodebuffer'
    ws.on('message', (data: ArrayBuffer | Buffer) => {
      const bytes = data instanceof ArrayBuffer ? new Uint8Array(data) : new Uint8Array(data.buffer, data.byteOffset, data.byteLength)
      if (this.queue) this.queue.push(bytes)
      else this.reader.push(bytes)
    })
    // Messages that arrived before the close are still handled: the client sent them.
    // A paced message still waiting is handled at the rate after the close too.
    ws.on('close', () => this.emit('close'))
    ws.on('pong', () => this.emit('pong'))
  }

  /** Starts delivering messages to the room; the ones that arrived while it loaded go first. */
  start(): void {
    const queued = this.queue ?? []
    this.queue = null
    for (const m of queued) this.reader.push(m)
  }

  get readyState(): number {
    return this.ws.readyState
  }

  /** The room's changes for this peer (the room code relays each to every socket). */
  send(message: Uint8Array, _opts?: unknown, cb?: (err?: Error) => void): void {
    if (!this.mayQueue()) return
    // the room code's own answer to a state vector (a sync step 2): the whole room for a new device
    if (message[0] === MESSAGE_SYNC && message[1] === syncProtocol.messageYjsSyncStep2) this.replyBytes = Math.max(this.replyBytes, message.byteLength)
    this.ws.send(message, { binary: true }, cb)
  }

  /** The largest sync reply this socket was sent: a first sync of a big room is queued whole. */
  private replyBytes = 0

  /**
   * Whether more may be queued for this peer. One that stopped reading with more than the
   * bound queued is dropped at once: a close would wait for a peer that does not read, and
   * until then the server would keep every change of the room for it.
   */
  private mayQueue(): boolean {
    if (this.ws.readyState !== this.ws.OPEN) return false
    const queued = this.ws.bufferedAmount
    if (queued <= this.replyBytes + this.ctx.budget.maxQueuedBytes) return true
    this.dropSlowReader({ queuedBytes: queued })
    return false
  }

  /** Drops a peer that stopped reading at once: a close would wait for it to read. */
  private dropSlowReader(detail: Record<string, number>): void {
    const { connection, room, log } = this.ctx
    log('warn', 'slow_reader', { room, connection: connection.id, agent: connection.agent, ...detail })
    if (typeof this.ws.terminate === 'function') this.ws.terminate()
    else this.ws.close(CLOSE.slowReader, 'this socket stopped reading')
  }

  close(code?: number, reason?: string): void {
    this.ws.close(code, reason)
  }

  ping(): void {
    this.ws.ping()
  }

  private forward(message: Uint8Array): void {
    // The room code reads `new Uint8Array(message)`; hand it an exact ArrayBuffer.
    this.emit('message', message.buffer.slice(message.byteOffset, message.byteOffset + message.byteLength))
  }

  /**
   * Applies a stored update to the room as the room code does with an update this socket sends
   * (this socket the transaction's origin; the room relays it to every peer), without framing
   * it as a message for the room code to decode again.
   */
  private applyToRoom(room: Y.Doc, update: Uint8Array): void {
    try {
      Y.applyUpdate(room, update, this)
    } catch (err) {
      this.ctx.log('error', 'room_apply_failed', { room: this.ctx.room, error: (err as Error).message })
    }
  }

  /** Resolves once every update received so far reached the room or was given up (a closing server waits for it). */
  async idle(): Promise<void> {
    while (this.reader.waiting) await new Promise((resolve) => setImmediate(resolve))
    let seen: Promise<void> | undefined
    while (seen !== this.delivered) {
      seen = this.delivered
      await seen
    }
  }

  /** Counts refusals against the connection's budget; false (and the socket closed) once it is spent. */
  private spend(refusals: number): boolean {
    if (countRefusals(this.ctx.budget, this.ctx.window, refusals)) return true
    const w = this.ctx.window
    const { connection, room, log } = this.ctx
    log('warn', 'over_budget', { room, connection: connection.id, agent: connection.agent, refusals: w.refusals })
    this.refuse({ code: 'over_budget', message: 'this connection sent more refused changes than the server takes per minute; it reconnects shortly', keys: {} }, false)
    this.giveUp(CLOSE.overBudget, 'over budget: too many refused updates per minute')
    return false
  }

  /**
   * Stops handling this socket's messages and closes it. A socket the server stopped reading
   * (over its byte rate, or backlogged) would never deliver the client's reply to the close,
   * and the half-closed socket, with what its peer still sends, would be held until the close
   * times out (30 s): once the close frame had time to leave, the socket is ended instead.
   */
  private giveUp(code: number, reason: string): void {
    this.closed = true
    this.ctx.onClose(code, reason)
    if (typeof this.ws.terminate === 'function') setTimeout(() => this.ws.terminate(), CLOSE_GRACE_MS).unref()
  }

  private receive(message: Uint8Array): void {
    let step: number
    let update: Uint8Array
    try {
      const decoder = decoding.createDecoder(message)
      const type = decoding.readVarUint(decoder)
      if (type !== MESSAGE_SYNC) return
      step = decoding.readVarUint(decoder)
      if (step === syncProtocol.messageYjsSyncStep1) return this.answerStep1(message, decoding.readVarUint8Array(decoder))
      if (step !== syncProtocol.messageYjsSyncStep2 && step !== syncProtocol.messageYjsUpdate) return
      // A read connection's own changes go out as updates, and every one is refused: refusing
      // it unread costs nothing. Its sync step 2 (what it holds) is still judged, since a
      // reconnect repeats what the room has.
      if (step === syncProtocol.messageYjsUpdate && this.ctx.connection.tier === 'read') {
        this.refuse({ code: 'read_only', message: 'this connection is read-only: its changes are not synced. Ask for a read_write connection to add observations.', keys: {} })
        return
      }
      update = decoding.readVarUint8Array(decoder)
    } catch {
      this.refuse({ code: 'malformed', message: 'the message could not be decoded', keys: {} })
      return
    }
    // Judged by size alone, unread: one update is judged and applied in one turn of the loop.
    if (!fitsOneMessage(update, this.ctx.budget.update)) {
      const { maxBytes, maxStructBytes, maxFileBytes } = this.ctx.budget.update
      this.refuse({ code: 'too_large', message: `an update of ${update.byteLength} bytes is larger than this server takes in one message (${maxBytes} bytes; one entry ${maxStructBytes}, one file's bytes ${maxFileBytes}); this client should send it in pieces`, keys: {} })
      return
    }
    if (step === syncProtocol.messageYjsSyncStep2) this.sawStep2 = true
    this.receiveUpdate(update)
  }

  /**
   * A client's state vector: the room answers with what the client lacks, which for a new
   * device is the whole room. Computed off this thread when the server can; the room's later
   * changes reach this socket as updates already (it is one of the room's connections), and a
   * client integrates those that arrive before this answer once it comes.
   */
  private answerStep1(message: Uint8Array, stateVector: Uint8Array): void {
    const syncReply = this.ctx.syncReply
    if (!syncReply) return this.forward(message)
    syncReply(stateVector).then((reply) => {
      if (reply === null) return this.forward(message)
      this.sendReply(reply, 0)
    }, (err: unknown) => {
      this.ctx.log('error', 'sync_reply_failed', { room: this.ctx.room, error: (err as Error).message })
      this.forward(message)
    })
  }

  /**
   * Sends the answer's messages from `i` on, each once the one before has left for the network:
   * a peer that stops reading holds one piece queued, not the room. One that takes no piece for
   * a long while is dropped like any reader that stopped.
   */
  private sendReply(messages: Uint8Array[], i: number): void {
    if (i >= messages.length || !this.mayQueue()) return
    const message = messages[i]!
    this.replyBytes = Math.max(this.replyBytes, message.byteLength)
    const stalled = setTimeout(() => this.dropSlowReader({ stalledReplyPiece: i }), REPLY_STALL_MS)
    stalled.unref()
    this.ws.send(message, { binary: true }, (err) => {
      clearTimeout(stalled)
      if (!err) this.sendReply(messages, i + 1)
    })
  }

  private receiveUpdate(update: Uint8Array): void {
    if (this.ctx.isRevoked()) return this.ctx.onRevokedUpdate()
    const { connection, room: roomName, log } = this.ctx
    const room = this.ctx.roomDoc()
    if (!room) return
    if (this.held && Date.now() - this.held.since > MAX_HELD_MS) this.held = null
    const combined = this.held ? Y.mergeUpdates([this.held.update, update]) : update
    const verdict = checkUpdate(connection.tier, room, combined, {
      connectionId: connection.id,
      ownerOf: this.ctx.ownerOf,
      claimsLeft: CLAIMS_PER_SOCKET - this.claims,
    })
    // the room's structs the check read are paid from the byte budget, whatever the verdict
    if (verdict.ok && verdict.work) this.ctx.window.bytes -= verdict.work * BYTES_PER_STRUCT_READ
    if (verdict.ok) {
      this.held = null
      if (verdict.noop) {
        if (combined.byteLength > LARGE_NOOP_BYTES || (verdict.work ?? 0) > COSTLY_NOOP_STRUCTS) this.spend(1)
        return
      }
      const claims = verdict.claims ?? []
      this.claims += claims.length
      const integrated = verdict.update ?? combined
      // The copy now holds this update; the room gets it once it is on disk.
      const flight = trackInFlight(room)
      // The owners first: no store (nor another server reading it) ever holds structs of a
      // client whose owner is not recorded yet. Only an update that starts a client waits for it.
      const stored = claims.length ? this.ctx.bindClients(claims).then(() => this.ctx.persist?.(integrated)) : this.ctx.persist?.(integrated)
      // Handled below once the earlier updates are delivered; marked now so a failure that comes
      // first is not an unhandled rejection (which ends a Node process).
      stored?.catch(() => undefined)
      // One update reaches the room per turn: updates stored by one group commit would
      // otherwise all be applied and relayed in the microtasks of a single turn.
      this.delivered = this.delivered.then(() => stored).then(nextTurn).then(() => {
        if (this.storeFailed) return
        // On disk now, so it reaches the room even if the socket closed meanwhile: a restart would load it anyway.
        flight.arrive(() => this.applyToRoom(room, integrated))
      }, (err: unknown) => {
        log('error', 'update_not_stored', { room: roomName, connection: connection.id, error: (err as Error).message })
        // later updates of this socket may build on this one: none of them reaches the room
        this.storeFailed = true
        this.giveUp(CLOSE.unavailable, 'the update could not be stored; try again later')
      }).finally(flight.done)
      return
    }
    if (verdict.incomplete) {
      // Right after connecting, an update may arrive before the sync step 2 it builds on;
      // it waits for it. After step 2 the missing part is something the server refused or
      // never got, and waiting would make every later message pay for it.
      if (!this.sawStep2 && combined.byteLength <= MAX_HELD_BYTES) {
        this.held = { update: combined, since: this.held?.since ?? Date.now() }
        return
      }
      this.held = null
      this.refuse({ code: 'incomplete', message: 'this change builds on earlier changes of this device that the server refused, so it was not synced either', keys: {} })
      return
    }
    this.held = null
    this.refuse({ code: verdict.code, message: verdict.message, keys: verdict.keys })
  }

  private refuse(r: Pick<Refusal, 'code' | 'message' | 'keys'>, counts = true): void {
    const { connection, room, log } = this.ctx
    const refusal: Refusal = { v: 1, ...r, tier: connection.tier, at: new Date().toISOString() }
    log('warn', 'update_refused', { room, connection: connection.id, agent: connection.agent, tier: connection.tier, code: r.code, keys: r.keys })
    if (this.ws.readyState === this.ws.OPEN) this.ws.send(encodeRefusal(refusal), { binary: true })
    if (counts) this.spend(1)
  }
}
