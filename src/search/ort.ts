// The one place that configures onnxruntime-web (wasm backend) and starts its runtime before any
// session is created.

import * as ort from 'onnxruntime-web'
import { MemoryError } from '../core/errors'
import { ASSET_DIRS, PACKAGE_ROOT } from '../package-root'

export interface OrtSettings {
  /**
   * Where the runtime's files are served: a URL prefix ending in `/` holding
   * `ort-wasm-simd-threaded.wasm` (and `.mjs`, which only the app's own build loads), or
   * per-file URLs (`{ wasm: url }`).
   */
  wasmPaths?: ort.Env.WasmPrefixOrFilePaths
  /** The runtime's `.wasm` itself, when the caller already holds its bytes; nothing is fetched then. */
  wasmBinary?: ArrayBuffer | Uint8Array
  /** Worker threads for the wasm backend; threads need cross-origin isolation in a browser. */
  numThreads?: number
}

/**
 * Set by the library's browser build (scripts/build-lib.ts), whose onnxruntime carries its wasm
 * glue inside instead of loading it with a run-time `import()`, which service workers forbid.
 */
declare const __CAIRN_ORT_GLUE_BUNDLED__: boolean | undefined
const glueBundled = typeof __CAIRN_ORT_GLUE_BUNDLED__ !== 'undefined' && __CAIRN_ORT_GLUE_BUNDLED__ === true

const isNode = typeof process !== 'undefined' && typeof process.versions?.node === 'string'
let settings: OrtSettings = {}
let applied = false

/**
 * Overrides the defaults; call before the first model loads (the app passes the Vite
 * asset URL, e.g. `${import.meta.env.BASE_URL}ort/`).
 */
export function configureOrt(next: OrtSettings): void {
  settings = { ...settings, ...next }
  applied = false
}

const RUNTIME_WASM = 'ort-wasm-simd-threaded.wasm'
const RUNTIME_GLUE = 'ort-wasm-simd-threaded.mjs'

function defaultWasmPaths(): string {
  if (isNode) {
    // Under Node the runtime loads its wasm from the package directory on disk; the
    // builtin is fetched at run time so browser bundles never see `node:module`.
    const { createRequire } = process.getBuiltinModule('node:module')
    try {
      const entry = createRequire(import.meta.url).resolve('onnxruntime-web')
      return entry.slice(0, Math.max(entry.lastIndexOf('/'), entry.lastIndexOf('\\')) + 1)
    } catch {
      // The installed package bundles the runtime's JS and ships its wasm files beside it.
      const { fileURLToPath } = process.getBuiltinModule('node:url')
      return fileURLToPath(new URL(ASSET_DIRS.ort[0], PACKAGE_ROOT))
    }
  }
  const base = (import.meta as ImportMeta & { env?: { BASE_URL?: string } }).env?.BASE_URL ?? '/'
  return `${base}ort/`
}

/** Under Node, the runtime's wasm when `dir` holds it only gzipped; otherwise undefined. */
function packedWasm(dir: string): Uint8Array | undefined {
  const { existsSync, readFileSync } = process.getBuiltinModule('node:fs')
  const { join } = process.getBuiltinModule('node:path')
  const plain = join(dir, RUNTIME_WASM)
  if (existsSync(plain) || !existsSync(`${plain}.gz`)) return undefined
  return new Uint8Array(process.getBuiltinModule('node:zlib').gunzipSync(readFileSync(`${plain}.gz`)))
}

function defaultThreads(): number {
  if (isNode) return 1
  // a service worker cannot start workers, and the bundled glue would start them from the
  // caller's own bundle: one thread unless the caller asks for more
  if (glueBundled || typeof Worker === 'undefined') return 1
  const isolated = (globalThis as { crossOriginIsolated?: boolean }).crossOriginIsolated === true
  return isolated ? Math.max(1, Math.min(4, navigator.hardwareConcurrency || 1)) : 1
}

/** Absolute URLs of the runtime's files in a browser, from the settings or the default prefix. */
export function runtimeFiles(paths: ort.Env.WasmPrefixOrFilePaths, base: string): { wasm: string; glue: string } {
  const at = (file: string) => new URL(file, new URL(String(typeof paths === 'string' ? paths : defaultWasmPaths()), base)).href
  if (typeof paths === 'string') return { wasm: at(RUNTIME_WASM), glue: at(RUNTIME_GLUE) }
  return { wasm: paths.wasm ? new URL(String(paths.wasm), base).href : at(RUNTIME_WASM), glue: paths.mjs ? new URL(String(paths.mjs), base).href : at(RUNTIME_GLUE) }
}

/** The configured runtime; every embedder goes through this. */
export function getOrt(): typeof ort {
  if (!applied) {
    const paths = settings.wasmPaths ?? defaultWasmPaths()
    if (isNode) {
      ort.env.wasm.wasmPaths = paths
      // the installed package keeps the wasm gzipped: hand the runtime its bytes expanded
      const packed = typeof paths === 'string' ? packedWasm(paths) : undefined
      if (packed) ort.env.wasm.wasmBinary = packed
    } else {
      const files = runtimeFiles(paths, globalThis.location?.href ?? 'http://localhost/')
      // per-file URLs, never a folder: given a folder, onnxruntime imports its glue from there
      // even where the bundle carries it
      ort.env.wasm.wasmPaths = glueBundled ? { wasm: files.wasm } : { mjs: files.glue, wasm: files.wasm }
    }
    ort.env.wasm.numThreads = settings.numThreads ?? defaultThreads()
    ort.env.logLevel = 'error'
    applied = true
  }
  return ort
}

// onnxruntime keeps a failed start for the life of the page or worker, so what can fail for
// a passing reason (fetching the wasm, a policy forbidding WebAssembly) is checked first, outside
// it, where a later call simply tries again.
let runtimeStarted = false
let runtimeBroken: string | undefined
let preparing: Promise<void> | undefined

/** One preparation at a time; a failed one is forgotten so the next call tries afresh. */
function prepareRuntime(): Promise<void> {
  preparing ??= prepareBrowserRuntime().catch((e: unknown) => {
    preparing = undefined
    throw e
  })
  return preparing
}

/** The smallest valid module: compiling it tells whether this context may compile WebAssembly at all. */
const EMPTY_MODULE = new Uint8Array([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00])

async function prepareBrowserRuntime(): Promise<void> {
  if (typeof WebAssembly === 'undefined') throw new MemoryError('model_failed', 'This context has no WebAssembly, which the embedding model needs.', { cause: 'no_webassembly' })
  try {
    await WebAssembly.compile(EMPTY_MODULE)
  } catch (e) {
    throw new MemoryError(
      'model_failed',
      `This context may not compile WebAssembly (${e instanceof Error ? e.message : String(e)}). Allow it in the Content-Security-Policy: script-src 'wasm-unsafe-eval' (for an extension, under content_security_policy.extension_pages in manifest.json).`,
      { cause: 'csp' },
    )
  }
  if (settings.wasmBinary) {
    ort.env.wasm.wasmBinary = settings.wasmBinary
    return
  }
  const url = String((getOrt().env.wasm.wasmPaths as ort.Env.WasmFilePaths).wasm)
  const fix = "Serve the package's ort/ files there (`cairn assets DIR` writes them, `cairn-memory/vite` serves them) or point configureOrt({ wasmPaths }) at them."
  let response: Response
  try {
    response = await fetch(url, { credentials: 'same-origin' })
  } catch (e) {
    throw new MemoryError('model_failed', `The onnxruntime wasm runtime could not be fetched from ${url} (${e instanceof Error ? e.message : String(e)}). ${fix}`, { cause: 'runtime_fetch', url })
  }
  // only the first bytes are read here: onnxruntime then streams the file and compiles it as it
  // arrives, faster than compiling it from bytes read whole
  const head = response.ok ? await firstBytes(response, 4) : undefined
  // a server's page for a missing file (an app's fallback to index.html) is no runtime either
  if (!head || !EMPTY_MODULE.subarray(0, 4).every((b, i) => head[i] === b)) {
    const why = head ? `the server answered with ${response.headers.get('content-type') || 'something'} that is not WebAssembly` : `HTTP ${response.status}`
    throw new MemoryError('model_failed', `The onnxruntime wasm runtime could not be fetched from ${url}: ${why}. ${fix}`, { cause: 'runtime_fetch', url, status: response.status })
  }
}

async function firstBytes(response: Response, count: number): Promise<Uint8Array> {
  if (!response.body) return new Uint8Array(await response.arrayBuffer()).subarray(0, count)
  const reader = response.body.getReader()
  const head = new Uint8Array(count)
  let filled = 0
  while (filled < count) {
    const { done, value } = await reader.read()
    if (done) break
    const take = value.subarray(0, count - filled)
    head.set(take, filled)
    filled += take.length
  }
  await reader.cancel().catch(() => undefined)
  return head.subarray(0, filled)
}

export async function createSession(model: Uint8Array): Promise<ort.InferenceSession> {
  if (runtimeBroken) {
    throw new MemoryError('model_failed', `onnxruntime-web failed to start earlier in this page or worker and cannot start again until it reloads: ${runtimeBroken}`, { cause: 'runtime_start' })
  }
  const api = getOrt()
  if (!runtimeStarted && !isNode) await prepareRuntime()
  try {
    const session = await api.InferenceSession.create(model, { executionProviders: ['wasm'], graphOptimizationLevel: 'all' })
    if (!runtimeStarted && !isNode) api.env.wasm.wasmBinary = undefined // compiled now: the caller's bytes are not held here
    runtimeStarted = true
    return session
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e)
    // the backend itself did not start (as opposed to this model being refused)
    if (!runtimeStarted && /no available backend/i.test(message)) {
      runtimeBroken = message
      throw new MemoryError('model_failed', `onnxruntime-web could not start its wasm backend here: ${message}`, { cause: 'runtime_start' })
    }
    throw e
  }
}

export type { ort }
