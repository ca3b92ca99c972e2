// The package's runtime files as a browser is served them. The package keeps the onnxruntime
// wasm gzipped (14 MB becomes 3.7 MB in every project that installs it); what a browser fetches
// is the plain file, so copying expands it. Node only: the Vite plugin and `cairn assets` use it.
import { createReadStream, existsSync, readdirSync, readFileSync } from 'node:fs'
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createGunzip, gunzipSync } from 'node:zlib'
import type { Readable } from 'node:stream'
import { ASSET_DIRS, PACKAGE_ROOT } from '../package-root'

/** Where a browser looks for each kind by default: `${base}models/` and `${base}ort/`. */
export const SERVED_AS = { models: 'models/', ort: 'ort/' } as const
export type AssetKind = keyof typeof SERVED_AS

/** Suffix of a file the package keeps compressed; it is served and copied without it. */
export const PACKED = '.gz'

export function assetDir(kind: AssetKind): string {
  const dirs = ASSET_DIRS[kind].map((d) => fileURLToPath(new URL(d, PACKAGE_ROOT)))
  const found = dirs.find((d) => existsSync(d))
  if (!found) throw new Error(`cairn-memory: ${kind} files are missing (looked in ${dirs.join(', ')}); reinstall the package`)
  return found
}

/** The names a browser requests from `dir`: a packed file under its plain name. */
export function servedNames(dir: string): string[] {
  return readdirSync(dir).map((name) => (name.endsWith(PACKED) ? name.slice(0, -PACKED.length) : name)).sort()
}

/** A stream of `name` from `dir` as a browser gets it, or null when there is no such file. */
export function openServed(dir: string, name: string): Readable | null {
  const plain = join(dir, name)
  if (existsSync(plain)) return createReadStream(plain)
  if (existsSync(plain + PACKED)) return createReadStream(plain + PACKED).pipe(createGunzip())
  return null
}

/** The bytes of `name` from `dir` as a browser gets it (a packed file expanded), or null. */
export function readServed(dir: string, name: string): Buffer | null {
  const plain = join(dir, name)
  if (existsSync(plain)) return readFileSync(plain)
  if (existsSync(plain + PACKED)) return gunzipSync(readFileSync(plain + PACKED))
  return null
}

/**
 * Writes the default model and the onnxruntime runtime, ready to serve, under `outDir`
 * (`models/` and `ort/`). Returns the files written, relative to `outDir`.
 */
export async function writeServedAssets(outDir: string): Promise<string[]> {
  const written: string[] = []
  for (const kind of Object.keys(SERVED_AS) as AssetKind[]) {
    const dir = assetDir(kind)
    const to = join(outDir, SERVED_AS[kind])
    await mkdir(to, { recursive: true })
    for (const name of servedNames(dir)) {
      await writeFile(join(to, name), readServed(dir, name)!)
      written.push(SERVED_AS[kind] + name)
    }
  }
  return written
}
