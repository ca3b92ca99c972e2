// A ZIP archive of stored (uncompressed) entries, for handing a folder to a browser download.
// Storing keeps the writer small and plainly right; the vault is text a person unpacks once, so
// the bytes deflate would save do not matter. No ZIP64: an archive over 4 GiB is refused.
import { MemoryError } from '../core/errors'
import { exportPathProblem } from '../core/identifiers'

export interface ZipEntry {
  /** Forward slashes, no leading slash. */
  path: string
  data: string | Uint8Array
}

const CRC_TABLE = (() => {
  const table = new Uint32Array(256)
  for (let n = 0; n < 256; n++) {
    let c = n
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1
    table[n] = c >>> 0
  }
  return table
})()

export function crc32(bytes: Uint8Array): number {
  let c = 0xffffffff
  for (let i = 0; i < bytes.length; i++) c = CRC_TABLE[(c ^ bytes[i]!) & 0xff]! ^ (c >>> 8)
  return (c ^ 0xffffffff) >>> 0
}

/** MS-DOS time and date, the only timestamp the base format has (2-second steps; written in UTC, as it holds no zone). */
function dosDateTime(at: Date): { time: number; date: number } {
  const year = Math.min(Math.max(at.getUTCFullYear(), 1980), 2107)
  return {
    time: (at.getUTCHours() << 11) | (at.getUTCMinutes() << 5) | (at.getUTCSeconds() >> 1),
    date: ((year - 1980) << 9) | ((at.getUTCMonth() + 1) << 5) | at.getUTCDate(),
  }
}

export function zipStore(entries: ZipEntry[], modified: Date = new Date()): Uint8Array {
  const utf8 = new TextEncoder()
  const { time, date } = dosDateTime(modified)
  const seen = new Set<string>()
  const items = entries.map((e) => {
    // an entry that names a place outside the archive's folder would be written there on unzipping
    const problem = exportPathProblem(e.path)
    if (problem !== null) throw new MemoryError('unsafe_path', `a zip entry path ${problem}: ${JSON.stringify(e.path.slice(0, 200))}`, { path: e.path.slice(0, 200) })
    if (seen.has(e.path)) throw new MemoryError('invalid_request', `two zip entries share the path ${e.path}`)
    seen.add(e.path)
    const name = utf8.encode(e.path)
    const data = typeof e.data === 'string' ? utf8.encode(e.data) : e.data
    return { name, data, crc: crc32(data) }
  })
  const localSize = items.reduce((n, it) => n + 30 + it.name.length + it.data.length, 0)
  const centralSize = items.reduce((n, it) => n + 46 + it.name.length, 0)
  if (items.length > 0xffff || localSize + centralSize + 22 > 0xffffffff) {
    throw new MemoryError('too_large', `the archive would hold ${items.length} entries and ${localSize} bytes, more than a ZIP without ZIP64 can`)
  }
  const out = new Uint8Array(localSize + centralSize + 22)
  const view = new DataView(out.buffer)
  let at = 0
  const u16 = (v: number): void => {
    view.setUint16(at, v, true)
    at += 2
  }
  const u32 = (v: number): void => {
    view.setUint32(at, v, true)
    at += 4
  }
  const bytes = (b: Uint8Array): void => {
    out.set(b, at)
    at += b.length
  }
  // general purpose flag bit 11: names are UTF-8
  const UTF8_NAMES = 0x0800
  const offsets: number[] = []
  for (const it of items) {
    offsets.push(at)
    u32(0x04034b50)
    u16(20) // version needed: 2.0
    u16(UTF8_NAMES)
    u16(0) // method: stored
    u16(time)
    u16(date)
    u32(it.crc)
    u32(it.data.length)
    u32(it.data.length)
    u16(it.name.length)
    u16(0)
    bytes(it.name)
    bytes(it.data)
  }
  const centralStart = at
  items.forEach((it, i) => {
    u32(0x02014b50)
    // made by Unix, 2.0: unzip tools then read names as they are rather than as DOS code page
    // 437, and take the file mode below
    u16(0x0314)
    u16(20)
    u16(UTF8_NAMES)
    u16(0)
    u16(time)
    u16(date)
    u32(it.crc)
    u32(it.data.length)
    u32(it.data.length)
    u16(it.name.length)
    u16(0) // extra
    u16(0) // comment
    u16(0) // disk
    u16(0) // internal attributes
    u32((0o100644 << 16) >>> 0) // external attributes: a regular file, rw-r--r--
    u32(offsets[i]!)
    bytes(it.name)
  })
  u32(0x06054b50)
  u16(0)
  u16(0)
  u16(items.length)
  u16(items.length)
  u32(centralSize)
  u32(centralStart)
  u16(0)
  return out
}
