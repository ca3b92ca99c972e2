// Reads a ZIP archive's stored entries through its central directory, as unzip tools do, and
// checks each entry's CRC with Node's own CRC-32: a second implementation to hold the writer to.
import { crc32 } from 'node:zlib'

export function readStoredZip(zip: Uint8Array): Map<string, Uint8Array> {
  const view = new DataView(zip.buffer, zip.byteOffset, zip.byteLength)
  const end = zip.byteLength - 22
  if (view.getUint32(end, true) !== 0x06054b50) throw new Error('no end of central directory record')
  const count = view.getUint16(end + 10, true)
  let at = view.getUint32(end + 16, true)
  const out = new Map<string, Uint8Array>()
  const text = new TextDecoder('utf-8', { fatal: true })
  for (let i = 0; i < count; i++) {
    if (view.getUint32(at, true) !== 0x02014b50) throw new Error(`central header ${i} missing`)
    const method = view.getUint16(at + 10, true)
    const crc = view.getUint32(at + 16, true)
    const size = view.getUint32(at + 24, true)
    const nameLength = view.getUint16(at + 28, true)
    const skip = view.getUint16(at + 30, true) + view.getUint16(at + 32, true)
    const local = view.getUint32(at + 42, true)
    const name = text.decode(zip.subarray(at + 46, at + 46 + nameLength))
    if (method !== 0) throw new Error(`${name}: method ${method}, not stored`)
    if (view.getUint32(local, true) !== 0x04034b50) throw new Error(`${name}: local header missing`)
    const localName = text.decode(zip.subarray(local + 30, local + 30 + view.getUint16(local + 26, true)))
    if (localName !== name) throw new Error(`${name}: local header names ${localName}`)
    const start = local + 30 + view.getUint16(local + 26, true) + view.getUint16(local + 28, true)
    const data = zip.subarray(start, start + size)
    if (crc32(data) !== crc) throw new Error(`${name}: CRC mismatch`)
    out.set(name, data)
    at += 46 + nameLength + skip
  }
  return out
}
