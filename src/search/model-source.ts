// Where a model file comes from: a URL (fetched, cached, verified) or bytes the user chose.

import { MemoryError } from '../core/errors'
import { verifySha256 } from './checksum'
import { fetchFresh, fetchModelBytes, type FetchModelOptions, type ModelCache } from './model-cache'

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

export function isModelSource(value: unknown): value is ModelSource {
  return typeof value === 'string' || value instanceof URL || value instanceof ArrayBuffer || value instanceof Uint8Array || (typeof Blob !== 'undefined' && value instanceof Blob)
}

export interface ManifestOptions<M> {
  baseUrl?: string
  manifest?: M | ModelSource
  fetch?: typeof fetch
  cache?: ModelCache | null
}

/**
 * A model's manifest, given or read, and the URL prefix its other files are under: the given
 * one, else the manifest URL's folder, else `${BASE_URL}models/`. A manifest read from a URL is
 * read from the network when online: it names the other files' checksums.
 */
export async function loadManifest<M>(options: ManifestOptions<M>, file: string, parse: (value: unknown) => M, what: string): Promise<{ manifest: M; baseUrl: string }> {
  const env = (import.meta as ImportMeta & { env?: { BASE_URL?: string } }).env
  let baseUrl = options.baseUrl ?? `${env?.BASE_URL ?? '/'}models/`
  const given = options.manifest
  if (given !== undefined && !isModelSource(given)) return { manifest: parse(given), baseUrl }
  // what is left is a source to read (the guard does not narrow a generic type)
  const source = given as ModelSource | undefined
  if ((typeof source === 'string' || source instanceof URL) && options.baseUrl === undefined) {
    const url = String(source)
    baseUrl = url.slice(0, url.lastIndexOf('/') + 1)
  }
  const io = { fetch: options.fetch, cache: options.cache, what }
  const where = source ?? baseUrl + file
  const read = typeof where === 'string' || where instanceof URL ? await fetchFresh(String(where), io) : await readModelSource(where, io)
  return { manifest: parse(parseJson(read.bytes, what)), baseUrl }
}
