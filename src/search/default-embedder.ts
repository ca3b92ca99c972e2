// The default embedder (the shipped static model) built where the code runs: under Node from the
// package's own files on disk, in a browser from URLs the application serves.
import { MemoryError } from '../core/errors'
import { ASSET_DIRS, PACKAGE_ROOT } from '../package-root'
import type { Embedder } from './embedder'
import type { ModelCache } from './model-cache'
import { createStaticEmbedder } from './static-embedder'
import { STATIC_MANIFEST_FILE } from './static-model-files'

export interface DefaultEmbedderOptions {
  /**
   * Browser: URL prefix the model files are served under (default `${BASE_URL}models/`; the
   * `cairn-memory/vite` plugin serves them there). Node: a directory holding them (default the
   * package's own copy).
   */
  baseUrl?: string
  fetch?: typeof fetch
  /** Browser: `null` turns Cache Storage off. */
  cache?: ModelCache | null
}

const isNode = typeof process !== 'undefined' && typeof process.versions?.node === 'string'

export async function createDefaultEmbedder(options: DefaultEmbedderOptions = {}): Promise<Embedder> {
  if (!isNode) return createStaticEmbedder({ ...options })
  // Node has no origin to fetch from: read the files, builtins fetched at run time so browser bundles never see them.
  const { readFileSync, existsSync } = process.getBuiltinModule('node:fs')
  const { fileURLToPath } = process.getBuiltinModule('node:url')
  const { join } = process.getBuiltinModule('node:path')
  const dirs = options.baseUrl ? [options.baseUrl] : ASSET_DIRS.models.map((d) => fileURLToPath(new URL(d, PACKAGE_ROOT)))
  const dir = dirs.find((d) => existsSync(join(d, STATIC_MANIFEST_FILE)))
  if (!dir) throw new MemoryError('model_failed', `The default model was not found in ${dirs.join(' or ')}; reinstall the package or pass baseUrl.`, { dirs })
  // the installed package keeps the large files gzipped (see scripts/build-lib.ts)
  const read = (file: string): Uint8Array =>
    new Uint8Array(existsSync(join(dir, file)) ? readFileSync(join(dir, file)) : process.getBuiltinModule('node:zlib').gunzipSync(readFileSync(join(dir, `${file}.gz`))))
  const manifest = JSON.parse(new TextDecoder().decode(read(STATIC_MANIFEST_FILE))) as { model?: { file?: string }; vocabulary?: { file?: string } }
  if (typeof manifest.model?.file !== 'string' || typeof manifest.vocabulary?.file !== 'string') {
    throw new MemoryError('model_failed', `${join(dir, STATIC_MANIFEST_FILE)} names no model or vocabulary file.`, {})
  }
  return createStaticEmbedder({ manifest: read(STATIC_MANIFEST_FILE), model: read(manifest.model.file), vocabulary: read(manifest.vocabulary.file), cache: null })
}
