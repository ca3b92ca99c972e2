// Where a model file comes from: a URL (fetched, cached, verified) or bytes the user chose.

import { MemoryError } from '../core/errors'
import { verifySha256 } from './checksum'
import { fetchModelBytes, type FetchModelOptions } from './model-cache'

/** A URL, or a user-chosen file (File/Blob) or its bytes. */
export type ModelSource = string | URL | Blob | ArrayBuffer | Uint8Array

export async function readModelSource(source: ModelSource, options: FetchModelOptions): Promise<{ bytes: Uint8Array; sha256: string }> {
  if (typeof source === 'string' || source instanceof URL) {
    const { bytes, sha256 } = await fetchModelBytes(String(source), options)
    return { bytes, sha256 }
  }
  let bytes: Uint8Array
  if (source instanceof Uint8Array) bytes = source
  else if (source instanceof ArrayBuffer) bytes = new Uint8Array(source)
  else if (typeof Blob !== 'undefined' && source instanceof Blob) bytes = new Uint8Array(await source.arrayBuffer())
  else throw new MemoryError('invalid_request', `The ${options.what} must be a URL, a File/Blob, an ArrayBuffer or a Uint8Array.`, {})
  return { bytes, sha256: await verifySha256(bytes, options.sha256, options.what) }
}

export function decodeText(bytes: Uint8Array): string {
  return new TextDecoder().decode(bytes)
}

export function parseJson(bytes: Uint8Array, what: string): unknown {
  try {
    return JSON.parse(decodeText(bytes))
  } catch (err) {
    throw new MemoryError('model_failed', `The ${what} is not valid JSON: ${(err as Error).message}.`, { what })
  }
}
