// The one place that configures onnxruntime-web (wasm backend) before any session is created.

import * as ort from 'onnxruntime-web'
import { ASSET_DIRS, PACKAGE_ROOT } from '../package-root'

export interface OrtSettings {
  /** Where `ort-wasm-simd-threaded.{mjs,wasm}` are served (a URL prefix ending in `/`, or per-file URLs). */
  wasmPaths?: ort.Env.WasmPrefixOrFilePaths
  /** Worker threads for the wasm backend; threads need cross-origin isolation in a browser. */
  numThreads?: number
}

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
  const isolated = (globalThis as { crossOriginIsolated?: boolean }).crossOriginIsolated === true
  return isolated ? Math.max(1, Math.min(4, navigator.hardwareConcurrency || 1)) : 1
}

/** The configured runtime; every embedder goes through this. */
export function getOrt(): typeof ort {
  if (!applied) {
    const paths = settings.wasmPaths ?? defaultWasmPaths()
    ort.env.wasm.wasmPaths = paths
    if (isNode && typeof paths === 'string') {
      // the installed package keeps the wasm gzipped: hand the runtime its bytes expanded
      const packed = packedWasm(paths)
      if (packed) ort.env.wasm.wasmBinary = packed
    }
    ort.env.wasm.numThreads = settings.numThreads ?? defaultThreads()
    ort.env.logLevel = 'error'
    applied = true
  }
  return ort
}

export async function createSession(model: Uint8Array): Promise<ort.InferenceSession> {
  return getOrt().InferenceSession.create(model, { executionProviders: ['wasm'], graphOptimizationLevel: 'all' })
}

export type { ort }
