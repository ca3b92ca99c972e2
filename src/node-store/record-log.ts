// The on-disk format of the durable Node store: a snapshot file and an append-only log whose
// records are [u32 length][u32 crc32][body]. A torn or corrupt tail (a crash mid-append) ends
// the readable log; everything before it is kept.
import { closeSync, existsSync, fdatasync, fdatasyncSync, fsyncSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs'
import { deserialize, serialize } from 'node:v8'
import { crc32 } from 'node:zlib'

const HEADER = 8

export function encodeRecord(body: Uint8Array): Buffer {
  const out = Buffer.allocUnsafe(HEADER + body.byteLength)
  out.writeUInt32BE(body.byteLength, 0)
  out.writeUInt32BE(crc32(body), 4)
  out.set(body, HEADER)
  return out
}

/** The records of a log up to the first torn or corrupt one, and the byte length of that good prefix. */
export function decodeRecords(bytes: Buffer): { records: Buffer[]; goodLength: number } {
  const records: Buffer[] = []
  let offset = 0
  while (offset + HEADER <= bytes.byteLength) {
    const length = bytes.readUInt32BE(offset)
    const end = offset + HEADER + length
    if (end > bytes.byteLength) break
    const body = bytes.subarray(offset + HEADER, end)
    if (crc32(body) !== bytes.readUInt32BE(offset + 4)) break
    records.push(body)
    offset = end
  }
  return { records, goodLength: offset }
}

export function readIfExists(path: string): Buffer | undefined {
  return existsSync(path) ? readFileSync(path) : undefined
}

/** Writes a whole file through a temporary name and an atomic rename, synced before and after. */
export function writeAtomically(path: string, data: Uint8Array): void {
  const tmp = `${path}.tmp`
  const fd = openSync(tmp, 'w')
  try {
    writeSync(fd, data)
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
  renameSync(tmp, path)
  syncDirectory(path.slice(0, Math.max(path.lastIndexOf('/'), path.lastIndexOf('\\'))) || '.')
}

export function syncDirectory(dir: string): void {
  try {
    const fd = openSync(dir, 'r')
    try {
      fsyncSync(fd)
    } finally {
      closeSync(fd)
    }
  } catch {
    // Some file systems refuse fsync on directories; the rename is still atomic there.
  }
}

/** An open log file: appends are written at once (a killed process keeps them) and synced to the disk in batches. */
export class LogWriter {
  private dirty = false
  private timer: ReturnType<typeof setTimeout> | undefined
  bytes: number

  constructor(
    private readonly fd: number,
    startBytes: number,
    private readonly syncDelayMs: number,
  ) {
    this.bytes = startBytes
  }

  append(body: Uint8Array): void {
    const record = encodeRecord(body)
    writeSync(this.fd, record)
    this.bytes += record.byteLength
    this.dirty = true
    if (this.syncDelayMs <= 0) return this.sync()
    // one fdatasync per batch of writes, not per write, on libuv's pool so writes keep flowing meanwhile
    this.timer ??= setTimeout(() => {
      this.timer = undefined
      this.syncInBackground()
    }, this.syncDelayMs)
    this.timer.unref?.()
  }

  private syncing = false

  private syncInBackground(): void {
    if (this.syncing || !this.dirty || this.closed) return
    this.syncing = true
    this.dirty = false
    fdatasync(this.fd, () => {
      this.syncing = false
      // appends that came in meanwhile get the next batch (an error here resurfaces on the next sync)
      if (this.dirty && !this.closed && !this.timer) this.syncInBackground()
    })
  }

  private closed = false

  sync(): void {
    if (!this.dirty && !this.syncing) return
    this.dirty = false
    fdatasyncSync(this.fd)
  }

  close(): void {
    if (this.timer) clearTimeout(this.timer)
    this.timer = undefined
    // a background sync may still be running: this one covers everything appended, then the file closes
    fdatasyncSync(this.fd)
    this.closed = true
    closeSync(this.fd)
  }
}

/** One row of a snapshot: where it lives, its key, and its value's structured-clone bytes. */
export interface SnapshotRow {
  db: string
  table: string
  key: unknown
  bytes: Buffer
}

export interface SnapshotHead {
  format: string
  generation: number
}

const STRING_KEY = 0
const CLONED_KEY = 1

/**
 * A snapshot as framed records: a head naming the format, generation and tables, then one record
 * per row. Each row's bytes are copied as they are, so writing and reading a snapshot never
 * re-encodes a value (nor wraps thousands of buffers in one structured clone).
 */
export function encodeSnapshot(head: SnapshotHead, rows: Iterable<SnapshotRow>): Buffer {
  const tables: Array<[string, string]> = []
  const tableAt = new Map<string, number>()
  const frames: Buffer[] = []
  for (const row of rows) {
    const id = `${row.db}\u0000${row.table}`
    let at = tableAt.get(id)
    if (at === undefined) {
      tableAt.set(id, (at = tables.length))
      tables.push([row.db, row.table])
    }
    const key = typeof row.key === 'string' ? Buffer.from(row.key, 'utf8') : serialize(row.key)
    const body = Buffer.allocUnsafe(7 + key.byteLength + row.bytes.byteLength)
    body.writeUInt16BE(at, 0)
    body.writeUInt8(typeof row.key === 'string' ? STRING_KEY : CLONED_KEY, 2)
    body.writeUInt32BE(key.byteLength, 3)
    body.set(key, 7)
    body.set(row.bytes, 7 + key.byteLength)
    frames.push(encodeRecord(body))
  }
  return Buffer.concat([encodeRecord(serialize({ ...head, tables })), ...frames])
}

/** Reads what `encodeSnapshot` wrote; undefined when the bytes are not such a snapshot, whole. */
export function decodeSnapshot(bytes: Buffer): { head: SnapshotHead; rows: SnapshotRow[] } | undefined {
  const { records, goodLength } = decodeRecords(bytes)
  // written through an atomic rename: anything short of the whole file is not this format
  if (goodLength !== bytes.byteLength || !records.length) return undefined
  let head: SnapshotHead & { tables: Array<[string, string]> }
  try {
    head = deserialize(records[0]!) as typeof head
  } catch {
    return undefined
  }
  if (typeof head?.format !== 'string' || !Array.isArray(head.tables)) return undefined
  const rows: SnapshotRow[] = []
  for (let i = 1; i < records.length; i++) {
    const body = records[i]!
    const where = head.tables[body.readUInt16BE(0)]
    if (!where) return undefined
    const keyLength = body.readUInt32BE(3)
    const keyBytes = body.subarray(7, 7 + keyLength)
    const key = body.readUInt8(2) === STRING_KEY ? keyBytes.toString('utf8') : deserialize(keyBytes)
    rows.push({ db: where[0], table: where[1], key, bytes: body.subarray(7 + keyLength) })
  }
  return { head: { format: head.format, generation: head.generation }, rows }
}
