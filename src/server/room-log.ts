// What the sync server's second thread computes besides its rooms, kept free of the file system:
// the file room store's record format ([u32 length][u32 crc32][Yjs update] per record; a whole
// log is checked there, and a damaged one says whose history the room now lacks), the framing
// of a sync reply, and which buffers a message can move.
import { crc32 } from 'node:zlib'
import * as Y from 'yjs'

export const RECORD_HEADER_BYTES = 8
const HEADER_BYTES = RECORD_HEADER_BYTES

export function encodeRecord(update: Uint8Array): Buffer {
  const out = Buffer.allocUnsafe(HEADER_BYTES + update.byteLength)
  out.writeUInt32BE(update.byteLength, 0)
  out.writeUInt32BE(crc32(update), 4)
  out.set(update, HEADER_BYTES)
  return out
}

/** The body of the record at `offset` when its length fits and its checksum matches; else null. */
function framedAt(bytes: Buffer, offset: number): Buffer | null {
  if (offset + HEADER_BYTES > bytes.byteLength) return null
  const length = bytes.readUInt32BE(offset)
  const end = offset + HEADER_BYTES + length
  // an empty body is never written (the CRC of nothing is 0, so zero bytes would pass as one)
  if (length === 0 || end > bytes.byteLength) return null
  const body = bytes.subarray(offset + HEADER_BYTES, end)
  return crc32(body) === bytes.readUInt32BE(offset + 4) ? body : null
}

/** A record at `offset` whose length fits, whose checksum matches and whose body is a Yjs update; else null. */
function recordAt(bytes: Buffer, offset: number): Uint8Array | null {
  const body = framedAt(bytes, offset)
  if (!body) return null
  try {
    Y.decodeUpdate(body)
  } catch {
    return null
  }
  return new Uint8Array(body)
}

/** A log's records merged into one record of the log, and how many records it replaces. */
export interface CompactedLog {
  record: Uint8Array
  records: number
}

/**
 * A whole log merged into one record, for compaction; null when the log is damaged (the
 * load repairs and reports that) or holds one record or none. Records are checked by length
 * and checksum only, since the merge reads every body anyway: one that its checksum passes but
 * that is no Yjs update (the full check's other test) fails the merge, and is then looked for
 * by that check, so a damaged log is left as it is here too.
 */
export function compactLog(bytes: Buffer): CompactedLog | null {
  const records: Uint8Array[] = []
  for (let offset = 0; offset < bytes.byteLength;) {
    const body = framedAt(bytes, offset)
    if (!body) return null
    records.push(body)
    offset += HEADER_BYTES + body.byteLength
  }
  if (records.length <= 1) return null
  try {
    return { record: encodeRecord(Y.mergeUpdates(records)), records: records.length }
  } catch (err) {
    const log = decodeRecords(bytes)
    if (log.skipped.length || log.goodLength < bytes.byteLength) return null
    throw err
  }
}

/**
 * A Yjs client (a device's session) whose history the room lacks from `from` on, up to `to`:
 * the structs it holds past `from` wait for the missing ones and stay invisible until a device
 * that has them sends them (a reconnecting device does: its sync step 2 answers the server's
 * state vector, which stops at `from`).
 */
export interface MissingHistory {
  client: number
  from: number
  to: number
}

export interface DecodedLog {
  records: Uint8Array[]
  /** Byte ranges that held no valid record and were skipped. */
  skipped: Array<{ from: number; to: number }>
  /** Where the last valid record ends: what follows is a torn tail. */
  goodLength: number
  /** When records were skipped: the clients whose later records now wait for what was lost. */
  missing: MissingHistory[]
}

/**
 * Reads every valid record. A bad stretch (a flipped byte, a zeroed block) is skipped by
 * looking for the next offset where a valid record starts, so the good records after it
 * survive; bytes after the last valid record are a torn tail.
 */
export function decodeRecords(bytes: Buffer): DecodedLog {
  const records: Uint8Array[] = []
  const skipped: Array<{ from: number; to: number }> = []
  let offset = 0
  let goodLength = 0
  while (offset + HEADER_BYTES <= bytes.byteLength) {
    const record = recordAt(bytes, offset)
    if (record) {
      records.push(record)
      offset += HEADER_BYTES + record.byteLength
      goodLength = offset
      continue
    }
    let next = offset + 1
    while (next + HEADER_BYTES <= bytes.byteLength && !recordAt(bytes, next)) next++
    if (next + HEADER_BYTES > bytes.byteLength) break
    skipped.push({ from: offset, to: next })
    offset = next
  }
  return { records, skipped, goodLength, missing: skipped.length ? missingHistory(records) : [] }
}

/**
 * Whose history `updates` lack: each client whose structs reach past what a document built
 * from them can integrate. A document stops a client's clock at its first gap, and at a struct
 * that builds on another client's missing one; both are history some device must send again.
 */
export function missingHistory(updates: Uint8Array[]): MissingHistory[] {
  if (!updates.length) return []
  const merged = updates.length === 1 ? updates[0]! : Y.mergeUpdates(updates)
  const doc = new Y.Doc({ gc: false })
  try {
    Y.applyUpdate(doc, merged)
    const held = Y.decodeStateVector(Y.encodeStateVector(doc))
    const missing: MissingHistory[] = []
    for (const [client, to] of Y.parseUpdateMeta(merged).to) {
      const from = held.get(client) ?? 0
      if (from < to) missing.push({ client, from, to })
    }
    return missing.sort((a, b) => a.client - b.client)
  } finally {
    doc.destroy()
  }
}


/**
 * The buffers of `arrays` that can move to the thread instead of being copied: each array's
 * own, whole buffer. Copying a room's megabytes in a message costs this thread tens of milliseconds.
 */
export function movable(arrays: Uint8Array[]): ArrayBuffer[] {
  const out = new Set<ArrayBuffer>()
  for (const a of arrays) {
    const buffer = a.buffer
    if (buffer instanceof ArrayBuffer && a.byteOffset === 0 && a.byteLength === buffer.byteLength) out.add(buffer)
  }
  return [...out]
}
