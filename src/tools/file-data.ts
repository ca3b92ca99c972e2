// Tool arguments and results are JSON, so file bytes travel as utf8 text or base64.
// Uses atob/btoa rather than Buffer so the tools also run in a browser.
import { MemoryError } from '../core/errors'

const TEXT_TYPE = /^text\/|[/+](json|xml|yaml|csv|markdown|javascript)$/

export function decodeData(data: string, encoding: 'utf8' | 'base64'): Uint8Array {
  if (encoding === 'utf8') return new TextEncoder().encode(data)
  try {
    const binary = atob(data.replace(/\s+/g, ''))
    return Uint8Array.from(binary, (c) => c.charCodeAt(0))
  } catch {
    throw new MemoryError('invalid_request', 'data is not valid base64; send text with encoding "utf8" or base64 with encoding "base64"', { path: 'data' })
  }
}

function toBase64(data: Uint8Array): string {
  let binary = ''
  // Chunked: String.fromCharCode with one argument per byte overflows the stack on large files.
  for (let i = 0; i < data.length; i += 0x8000) binary += String.fromCharCode(...data.subarray(i, i + 0x8000))
  return btoa(binary)
}

/** Text types that decode cleanly come back readable; everything else as base64. */
export function encodeData(data: Uint8Array, type: string): { encoding: 'utf8' | 'base64'; data: string } {
  if (TEXT_TYPE.test(type)) {
    try {
      return { encoding: 'utf8', data: new TextDecoder('utf-8', { fatal: true }).decode(data) }
    } catch {
      // not valid UTF-8 despite its type: fall through to base64
    }
  }
  return { encoding: 'base64', data: toBase64(data) }
}
