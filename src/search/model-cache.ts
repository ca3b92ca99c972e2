// Fetches model assets once and keeps them in Cache Storage (or any injected cache),
// verifying the sha256 on every load so a corrupt or replaced file is never used.

import { MemoryError } from '../core/errors'
import { verifySha256 } from './checksum'

export interface ModelCache {
  get(key: string): Promise<Uint8Array | undefined>
  put(key: string, bytes: Uint8Array): Promise<void>
  delete(key: string): Promise<void>
}

/** The part of the Cache Storage API that model caching uses (so tests can pass their own). */
export interface CacheStorageLike {
  open(name: string): Promise<{
    match(request: string): Promise<Response | undefined>
    put(request: string, response: Response): Promise<void>
    delete(request: string): Promise<boolean>
  }>
}

export const MODEL_CACHE_NAME = 'cairn-models'

export function cacheStorageModelCache(storage: CacheStorageLike, name = MODEL_CACHE_NAME): ModelCache {
  const open = () => storage.open(name)
  return {
    async get(key) {
      const response = await (await open()).match(key)
      return response ? new Uint8Array(await response.arrayBuffer()) : undefined
    },
    async put(key, bytes) {
      const headers = { 'content-type': 'application/octet-stream', 'content-length': String(bytes.byteLength) }
      await (await open()).put(key, new Response(bytes as Uint8Array<ArrayBuffer>, { headers }))
    },
    async delete(key) {
      await (await open()).delete(key)
    },
  }
}

/** Cache Storage when the environment has it (browsers, workers), otherwise no cache. */
export function defaultModelCache(): ModelCache | undefined {
  const storage = (globalThis as { caches?: CacheStorageLike }).caches
  return storage ? cacheStorageModelCache(storage) : undefined
}

export interface FetchModelOptions {
  fetch?: typeof fetch
  /** `null` turns caching off; omitted means `defaultModelCache()`. */
  cache?: ModelCache | null
  /** Expected sha256 (hex); a mismatch is `model_failed`. */
  sha256?: string
  /** What the file is, for error messages ("transformer model", "vocabulary"). */
  what: string
}

export interface FetchedModel {
  bytes: Uint8Array
  sha256: string
  fromCache: boolean
}

export async function fetchModelBytes(url: string, options: FetchModelOptions): Promise<FetchedModel> {
  const cache = options.cache === undefined ? defaultModelCache() : options.cache
  const cached = cache ? await cache.get(url).catch(() => undefined) : undefined
  if (cached) {
    try {
      return { bytes: cached, sha256: await verifySha256(cached, options.sha256, options.what), fromCache: true }
    } catch {
      // A stale or damaged entry: drop it and fetch a fresh copy.
      await cache?.delete(url).catch(() => undefined)
    }
  }
  const bytes = await download(url, options)
  const sha256 = await verifySha256(bytes, options.sha256, options.what)
  // Caching is best effort: a full quota must not fail the load.
  await cache?.put(url, bytes).catch(() => undefined)
  return { bytes, sha256, fromCache: false }
}

/**
 * Network first, cache as the offline fallback: for small files that name the checksums of the
 * others (a manifest), so a new model version is seen as soon as the network is back.
 */
export async function fetchFresh(url: string, options: FetchModelOptions): Promise<FetchedModel> {
  const cache = options.cache === undefined ? defaultModelCache() : options.cache
  // known to be offline: the cached copy without a request the browser would log as failed
  if ((globalThis as { navigator?: { onLine?: boolean } }).navigator?.onLine === false && cache) {
    const cached = await cache.get(url).catch(() => undefined)
    if (cached) return { bytes: cached, sha256: await verifySha256(cached, options.sha256, options.what), fromCache: true }
  }
  try {
    const bytes = await download(url, options)
    await cache?.put(url, bytes).catch(() => undefined)
    return { bytes, sha256: await verifySha256(bytes, options.sha256, options.what), fromCache: false }
  } catch (err) {
    const cached = cache ? await cache.get(url).catch(() => undefined) : undefined
    if (!cached) throw err
    return { bytes: cached, sha256: await verifySha256(cached, options.sha256, options.what), fromCache: true }
  }
}

async function download(url: string, options: FetchModelOptions): Promise<Uint8Array> {
  const fetchFn = options.fetch ?? globalThis.fetch
  let response: Response
  try {
    response = await fetchFn(url)
  } catch (err) {
    throw new MemoryError('model_failed', `Could not download the ${options.what} from ${url}: ${(err as Error).message}. Check the URL and the network, or load the file from disk.`, { url })
  }
  if (!response.ok) {
    throw new MemoryError('model_failed', `Downloading the ${options.what} from ${url} failed with HTTP ${response.status}. Check the URL.`, { url, status: response.status })
  }
  return new Uint8Array(await response.arrayBuffer())
}
