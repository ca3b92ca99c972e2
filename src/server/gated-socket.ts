// Stands between a client's WebSocket and @y/websocket-server's room handling: it looks like
// the socket to the room code, but lets a message through only after the connection's tier
// allows it. Sync step 1 (a state vector) and awareness always pass; every update (sync
// step 2 or update) is checked against the room first, and a refused one never reaches the
// room: the client gets a refusal frame instead.
import { EventEmitter } from 'node:events'
import * as decoding from 'lib0/decoding'
import * as encoding from 'lib0/encoding'
import type { WebSocket } from 'ws'
import * as syncProtocol from 'y-protocols/sync'
import * as Y from 'yjs'
import type { Connection } from '../core/types'
import { encodeRefusal, type Refusal } from '../sync/refusal'
import type { SyncLog } from './log'
import { checkUpdate } from './update-policy'

const MESSAGE_SYNC = 0
const MESSAGE_AWARENESS = 1
/** An update that keeps waiting for missing history is dropped beyond this size. */
const MAX_HELD_BYTES = 16 * 1024 * 1024

export interface GateContext {
  connection: Connection
  room: string
  log: SyncLog
  /** The live room document; present once the room is set up. */
  roomDoc: () => Y.Doc | undefined
  /** Re-checked on every update, so a revoke that has not closed the socket yet still bites. */
  isRevoked: () => boolean
  onRevokedUpdate: () => void
  /** Starts making an accepted update durable, just before the room applies it. */
  persist?: (update: Uint8Array) => void
  /**
   * What the room's persisted updates still wait for, or null when nothing is pending: every
   * message to the client (a relayed update, a sync reply) is held until then, so no client
   * sees an update that could still be lost.
   */
  whenDurable?: () => Promise<void> | null
}

function encodeUpdateMessage(update: Uint8Array): Uint8Array {
  const encoder = encoding.createEncoder()
  encoding.writeVarUint(encoder, MESSAGE_SYNC)
  syncProtocol.writeUpdate(encoder, update)
  return encoding.toUint8Array(encoder)
}

export class GatedSocket extends EventEmitter {
  private queue: Uint8Array[] | null = []
  /** Updates that depend on history the room lacks, merged, waiting for the rest. */
  private held: Uint8Array | null = null
  private sawStep2 = false
  /** Messages to the client waiting for durability, in order. */
  private outgoing: Promise<unknown> = Promise.resolve()
  private heldOut = 0
  binaryType = 'arraybuffer'

  constructor(readonly ws: WebSocket, private readonly ctx: GateContext) {
    super()
    ws.binaryType = 'arraybuffer'
    ws.on('message', (data: ArrayBuffer | Buffer) => {
      const bytes = data instanceof ArrayBuffer ? new Uint8Array(data) : new Uint8Array(data.buffer, data.byteOffset, data.byteLength)
      if (this.queue) this.queue.push(bytes)
      else this.receive(bytes)
    })
    ws.on('close', () => this.emit('close'))
    ws.on('pong', () => this.emit('pong'))
  }

  /** Starts delivering messages to the room; the ones that arrived while it loaded go first. */
  start(): void {
    const queued = this.queue ?? []
    this.queue = null
    for (const m of queued) this.receive(m)
  }

  get readyState(): number {
    return this.ws.readyState
  }

  send(message: Uint8Array, _opts?: unknown, cb?: (err?: Error) => void): void {
    const wait = this.ctx.whenDurable?.() ?? null
    if (wait === null && this.heldOut === 0) return this.ws.send(message, { binary: true }, cb)
    this.heldOut++
    this.outgoing = Promise.all([this.outgoing, wait]).then(() => {
      this.heldOut--
      this.ws.send(message, { binary: true }, cb)
    })
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

  private receive(message: Uint8Array): void {
    try {
      const decoder = decoding.createDecoder(message)
      const type = decoding.readVarUint(decoder)
      if (type === MESSAGE_AWARENESS) return this.forward(message)
      if (type !== MESSAGE_SYNC) return
      const step = decoding.readVarUint(decoder)
      if (step === syncProtocol.messageYjsSyncStep1) return this.forward(message)
      if (step !== syncProtocol.messageYjsSyncStep2 && step !== syncProtocol.messageYjsUpdate) return
      const update = decoding.readVarUint8Array(decoder)
      if (step === syncProtocol.messageYjsSyncStep2) this.sawStep2 = true
      this.receiveUpdate(update)
    } catch {
      this.refuse({ code: 'malformed', message: 'the message could not be decoded', keys: {} })
    }
  }

  private receiveUpdate(update: Uint8Array): void {
    if (this.ctx.isRevoked()) return this.ctx.onRevokedUpdate()
    const { tier } = this.ctx.connection
    const room = this.ctx.roomDoc()
    if (!room) return
    const combined = this.held ? Y.mergeUpdates([this.held, update]) : update
    const verdict = checkUpdate(tier, room, combined)
    if (verdict.ok) {
      this.held = null
      if (verdict.noop) return
      this.ctx.persist?.(combined)
      this.forward(encodeUpdateMessage(combined))
      return
    }
    if (verdict.incomplete) {
      // Right after connecting, an update may arrive before the sync step 2 it builds on;
      // it waits for it. After step 2 the missing part is something the server refused.
      this.held = combined.byteLength <= MAX_HELD_BYTES ? combined : null
      if (this.sawStep2) {
        this.refuse({ code: 'incomplete', message: 'this change builds on earlier changes of this device that the server refused, so it was not synced either', keys: {} })
      }
      return
    }
    this.held = null
    this.refuse({ code: verdict.code, message: verdict.message, keys: verdict.keys })
  }

  private refuse(r: Pick<Refusal, 'code' | 'message' | 'keys'>): void {
    const { connection, room, log } = this.ctx
    const refusal: Refusal = { v: 1, ...r, tier: connection.tier, at: new Date().toISOString() }
    log('warn', 'update_refused', { room, connection: connection.id, agent: connection.agent, tier: connection.tier, code: r.code, keys: r.keys })
    if (this.ws.readyState === this.ws.OPEN) this.ws.send(encodeRefusal(refusal), { binary: true })
  }
}
