// Appendix files: what a file to store must be, checked before anything is stored.
import { isValidFilePath, LIMITS, own } from '../core/contract'
import { MemoryError } from '../core/errors'

/** Larger sources belong outside the memory; this keeps a synced document small enough to merge. */
export const MAX_FILE_BYTES = 5 * 1024 * 1024

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
  const problems: string[] = []
  const str = (k: string, max: number, required: boolean): string => {
    const v = own(raw, k)
    if (v === undefined && !required) return ''
    if (typeof v !== 'string' || (required && !v.trim())) {
      problems.push(`${k} must be a non-empty string`)
      return ''
    }
    if (v.length > max) problems.push(`${k} is longer than ${max} characters`)
    return v.trim()
  }
  const path = str('path', LIMITS.pathChars, true)
  if (path && !isValidFilePath(path)) problems.push(`path "${path}" must be relative, "/"-separated, without "." or ".." parts`)
  const filename = str('filename', 255, false) || path.split('/').pop() || ''
  const type = str('type', 255, false) || 'application/octet-stream'
  const description = str('description', LIMITS.descriptionChars, false)
  const data = await toBytes(own(raw, 'data'))
  if (!data) problems.push('data must be a Uint8Array, ArrayBuffer, Blob or string')
  if (problems.length) throw new MemoryError('invalid_write', `storeFile rejected: ${problems.join('; ')}`, { problems })
  if (data!.byteLength > MAX_FILE_BYTES) {
    throw new MemoryError('too_large', `the file is ${data!.byteLength} bytes; the limit is ${MAX_FILE_BYTES}. Store a smaller excerpt or keep the source elsewhere.`, { size: data!.byteLength, limit: MAX_FILE_BYTES })
  }
  return { path, filename, type, description, data: data! }
}

async function toBytes(v: unknown): Promise<Uint8Array | undefined> {
  if (v instanceof Uint8Array) return new Uint8Array(v)
  if (v instanceof ArrayBuffer) return new Uint8Array(v.slice(0))
  if (typeof v === 'string') return new TextEncoder().encode(v)
  if (typeof Blob !== 'undefined' && v instanceof Blob) return new Uint8Array(await v.arrayBuffer())
  return undefined
}
