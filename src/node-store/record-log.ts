// The on-disk format of the durable Node store: a snapshot file and an append-only log whose
// records are [u32 length][u32 crc32][body]. A torn or corrupt tail (a crash mid-append) ends
// the readable log; everything before it is kept.
import { closeSync, existsSync, fdatasync, fdatasyncSync, fsyncSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs'
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
