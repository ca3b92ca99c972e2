// A large answer to a device's state vector (a new device joining a big memory) travels in
// pieces: the server sends them one at a time as the socket drains, so a device that stops
// reading holds one piece of the server's memory, not the room; the device applies and indexes
// each piece as it comes and can say how far it is. Every piece but the last is an ordinary
// sync update, followed by a progress message only Cairn's client reads (other y-websocket
// clients skip it); the last piece is the sync step 2 that marks the device synced.
import * as decoding from 'lib0/decoding'
import * as encoding from 'lib0/encoding'
import * as syncProtocol from 'y-protocols/sync'
import { splitUpdate } from './update-split'

/** A message type of its own, beside y-websocket's 0-3 and the refusal's 100. */
export const MESSAGE_SYNC_PROGRESS = 101

/**
 * The size of one piece. A piece is judged by nobody (it comes from the server) but applied,
 * derived and indexed by the device in one turn of its worker: 256 KiB is about 250 notes.
 */
export const FIRST_SYNC_PIECE_BYTES = 256 * 1024

export interface FirstSyncProgress {
  /** Pieces applied so far, of `of` (a memory's view counts those its engine applied: 0 until the first). */
  received: number
  of: number
}

/** A y-protocols sync message (type 0) of `step` (sync step 2 or update) carrying `update`. */
export function syncMessage(step: number, update: Uint8Array): Uint8Array<ArrayBuffer> {
  const encoder = encoding.createEncoder()
  encoding.writeVarUint(encoder, 0)
  encoding.writeVarUint(encoder, step)
  encoding.writeVarUint8Array(encoder, update)
  return encoding.toUint8Array(encoder) as Uint8Array<ArrayBuffer>
}

export function encodeProgress(progress: FirstSyncProgress): Uint8Array {
  const encoder = encoding.createEncoder()
  encoding.writeVarUint(encoder, MESSAGE_SYNC_PROGRESS)
  encoding.writeVarUint(encoder, progress.received)
  encoding.writeVarUint(encoder, progress.of)
  return encoding.toUint8Array(encoder)
}

/** Reads a progress message after its type; null when it does not make sense. */
export function readProgress(decoder: decoding.Decoder): FirstSyncProgress | null {
  try {
    const received = decoding.readVarUint(decoder)
    const of = decoding.readVarUint(decoder)
    return received >= 1 && received <= of ? { received, of } : null
  } catch {
    return null
  }
}

/**
 * The messages answering a state vector with `update` (what the room holds beyond it), in the
 * order they are sent: one sync step 2 when it fits one piece; else each piece as an update and
 * its progress, and the last piece as the step 2.
 */
export function firstSyncMessages(update: Uint8Array, pieceBytes = FIRST_SYNC_PIECE_BYTES): Uint8Array[] {
  const pieces = update.byteLength <= pieceBytes ? [update] : splitUpdate(update, pieceBytes)
  const out: Uint8Array[] = []
  pieces.forEach((piece, i) => {
    if (i === pieces.length - 1) out.push(syncMessage(syncProtocol.messageYjsSyncStep2, piece))
    else out.push(syncMessage(syncProtocol.messageYjsUpdate, piece), encodeProgress({ received: i + 1, of: pieces.length }))
  })
  return out
}
