// What one connection may spend, over all its sockets: bytes of updates per second (a token
// bucket) and refused updates per window; and the paced reading of a socket within that budget,
// one message per turn of the event loop, the socket paused while it is overdrawn or backlogged.
import type { WebSocket } from 'ws'
import { MAX_UPDATE_BYTES, UPDATE_LIMITS, type UpdateLimits } from '../sync/update-split'

export interface Budget {
  /**
   * Bytes of updates a connection may send per second, over all its sockets, after a burst of
   * `burstBytes` (a first sync of a big memory): a token bucket. A socket that overdraws it is
   * paused (not read) until the bucket is back above zero, so its messages wait in the
   * kernel and the client, not in the server's memory, and it takes a bounded share of each second.
   */
  bytesPerSecond: number
  burstBytes: number
  /** Refused updates a connection may send per window; a large update that changes nothing counts as one. */
  refusals: number
  windowMs: number
  /** What one update may weigh; larger ones are refused unread (`too_large`). */
  update: UpdateLimits
  /** Sockets one connection may have open to one memory at once. */
  socketsPerConnection: number
  /**
   * Bytes the server keeps queued for a socket beyond the largest sync reply it was sent: a
   * peer that stops reading past it is dropped (and reconnects), so it cannot make the server
   * hold every later change of the room for it.
   */
  maxQueuedBytes: number
}

export const DEFAULT_BUDGET: Budget = {
  bytesPerSecond: 4 * 1024 * 1024,
  burstBytes: 32 * 1024 * 1024,
  refusals: 30,
  windowMs: 60_000,
  update: UPDATE_LIMITS,
  socketsPerConnection: 8,
  maxQueuedBytes: 8 * 1024 * 1024,
}

/** What a connection spent; the server keeps one per connection, shared by its sockets. */
export interface BudgetWindow {
  /** Start of the refusal window. */
  start: number
  refusals: number
  /** Bytes left in the bucket (negative: overdrawn), as of `filledAt`. */
  bytes: number
  filledAt: number
}

export const newBudgetWindow = (budget: Budget): BudgetWindow => ({ start: 0, refusals: 0, bytes: budget.burstBytes, filledAt: Date.now() })

/**
 * A resent update costs a full decode even though it changes nothing: one this large counts
 * against the refusal budget (a client sends one such state at most per connect).
 */
export const LARGE_NOOP_BYTES = MAX_UPDATE_BYTES / 2

/**
 * What reading one of the room's structs costs a connection's byte budget: a check that walks
 * the room (a delete set over much of it) is paid for like the bytes it takes the place of,
 * so a message of a few bytes cannot buy unbounded work.
 */
export const BYTES_PER_STRUCT_READ = 64
/**
 * A no-op that made the server read more of the room's structs than this counts as a refusal:
 * a reconnect sends its whole delete set once, a flood of them is closed after the budget.
 */
export const COSTLY_NOOP_STRUCTS = 1_000

/** Refills the connection's bucket; how long until it is no longer overdrawn (0: it is not). */
function overdrawnFor(budget: Budget, w: BudgetWindow): number {
  const now = Date.now()
  w.bytes = Math.min(budget.burstBytes, w.bytes + ((now - w.filledAt) / 1000) * budget.bytesPerSecond)
  w.filledAt = now
  return w.bytes >= 0 ? 0 : Math.ceil((-w.bytes / budget.bytesPerSecond) * 1000)
}

/** Counts refusals against the connection's window; false once more were refused than the budget allows. */
export function countRefusals(budget: Budget, w: BudgetWindow, refusals: number): boolean {
  const now = Date.now()
  if (now - w.start > budget.windowMs) Object.assign(w, { start: now, refusals: 0 })
  w.refusals += refusals
  return w.refusals <= budget.refusals
}

/** Messages a socket may have waiting before it is no longer read. */
const BACKLOG = 4

/**
 * Handling time every socket shares in one turn of the event loop, ms. Each socket handles one
 * message per turn, but the turns of all sockets run back to back in one phase of the loop:
 * past this slice the rest wait for the next turn, so the loop polls for I/O (a health check, a
 * new socket) between, however many sockets send at once.
 */
export const LOOP_SLICE_MS = 10
let sliceStartedAt: number | null = null

/** Whether this turn's slice is spent; the first call in a turn starts it. */
function sliceSpent(): boolean {
  const now = performance.now()
  if (sliceStartedAt === null) {
    sliceStartedAt = now
    // runs in the next turn's check phase, ahead of the handling deferred in this one
    setImmediate(() => {
      sliceStartedAt = null
    })
    return false
  }
  return now - sliceStartedAt > LOOP_SLICE_MS
}

/**
 * Hands a socket's messages to `handle` one per turn of the event loop: a burst of large
 * updates that arrives in one network read would otherwise hold the loop for all of them, and
 * every other socket of the server with it. Each message is paid from the connection's bucket
 * first; while it is overdrawn, or BACKLOG messages wait, the socket is not read.
 */
export class PacedReader {
  private pending: Uint8Array[] = []
  /** Reading is paused while the connection is over its byte rate. */
  private paused = false
  /** Reading is paused while BACKLOG messages wait. */
  private backlogged = false
  private resumeAt: ReturnType<typeof setTimeout> | null = null

  /** `stopped`: the socket was given up on; what waits is dropped. */
  constructor(private readonly ws: WebSocket, private readonly budget: Budget, private readonly window: BudgetWindow, private readonly handle: (message: Uint8Array) => void, private readonly stopped: () => boolean) {}

  /** Messages received and not handled yet (the first one may be being handled). */
  get waiting(): number {
    return this.pending.length
  }

  push(message: Uint8Array): void {
    if (this.stopped()) return
    this.pending.push(message)
    if (this.pending.length === 1) setImmediate(this.drain)
    // A socket with messages waiting is not read on: the next network reads (each frame
    // unmasked as it is read) wait in the kernel, and no turn reads megabytes at once.
    if (this.pending.length >= BACKLOG && !this.backlogged) {
      if (!this.paused) this.stopReading()
      this.backlogged = true
    }
  }

  /** Reads on once few enough messages wait and the byte rate allows it. */
  private readOn(): void {
    if (this.paused || this.backlogged || this.ws.readyState !== this.ws.OPEN) return
    if (typeof this.ws.resume === 'function') this.ws.resume()
  }

  private stopReading(): void {
    if (typeof this.ws.pause === 'function') this.ws.pause()
  }

  private readonly drain = (): void => {
    this.resumeAt = null
    const message = this.pending[0]
    if (message && !this.stopped()) {
      if (sliceSpent()) {
        setImmediate(this.drain)
        return
      }
      const wait = overdrawnFor(this.budget, this.window)
      if (wait > 0) {
        // Over its byte rate: the socket is not read, and this message waits, until the bucket refills.
        if (!this.paused && !this.backlogged) this.stopReading()
        this.paused = true
        this.resumeAt = setTimeout(this.drain, wait)
        return
      }
      this.window.bytes -= message.byteLength
      this.handle(message)
    }
    this.pending.shift()
    if (this.stopped()) this.pending = []
    if (this.pending.length) setImmediate(this.drain)
    else if (this.paused) {
      this.paused = false
      this.readOn()
    }
    if (this.backlogged && this.pending.length <= 1) {
      this.backlogged = false
      this.readOn()
    }
  }
}
