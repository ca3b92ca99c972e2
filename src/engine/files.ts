// Appendix files: what a file to store must be, checked before anything is stored.
import { own, validateFileFields } from '../core/contract'
import { MemoryError } from '../core/errors'
import { MAX_FILE_BYTES } from '../core/limits'

export interface FileInput {
  path: string
  filename: string
  type: string
  data: Uint8Array
  description: string
}

export async function validateFileInput(input: unknown): Promise<FileInput> {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw new MemoryError('invalid_write', 'storeFile takes { path, filename, type, data, description }')
  }
  const raw = input as Record<string, unknown>
  // the same rules the peer check applies to a synced file entry (core/contract)
  const { value, issues } = validateFileFields(raw)
  const problems = issues.map((i) => i.message)
  const data = await toBytes(own(raw, 'data'))
  if (!data) problems.push('data must be a Uint8Array, ArrayBuffer, Blob or string')
  if (problems.length) throw new MemoryError('invalid_write', `storeFile rejected: ${problems.join('; ')}`, { problems, issues })
  if (data!.byteLength > MAX_FILE_BYTES) {
    throw new MemoryError('too_large', `the file is ${data!.byteLength} bytes; the limit is ${MAX_FILE_BYTES}. Store a smaller excerpt or keep the source elsewhere.`, { size: data!.byteLength, limit: MAX_FILE_BYTES })
  }
  return { ...value, data: data! }
}

async function toBytes(v: unknown): Promise<Uint8Array | undefined> {
  if (v instanceof Uint8Array) return new Uint8Array(v)
  if (v instanceof ArrayBuffer) return new Uint8Array(v.slice(0))
  if (typeof v === 'string') return new TextEncoder().encode(v)
  if (typeof Blob !== 'undefined' && v instanceof Blob) return new Uint8Array(await v.arrayBuffer())
  return undefined
}
