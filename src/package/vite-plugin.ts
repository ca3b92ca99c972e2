// `cairn-memory/vite`: a Vite plugin that serves the default model and the onnxruntime wasm
// runtime at `${base}models/` and `${base}ort/` in dev and copies them into the build, which is
// where the library looks for them in a browser by default.
import { createReadStream, existsSync } from 'node:fs'
import { cp } from 'node:fs/promises'
import { join, resolve, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Plugin } from 'vite'
import { ASSET_DIRS, PACKAGE_ROOT } from '../package-root'

const SERVED = { models: 'models/', ort: 'ort/' } as const

const TYPES: Record<string, string> = { '.wasm': 'application/wasm', '.mjs': 'text/javascript', '.json': 'application/json', '.onnx': 'application/octet-stream', '.txt': 'text/plain; charset=utf-8', '.md': 'text/markdown; charset=utf-8' }

function assetDir(kind: keyof typeof ASSET_DIRS): string {
  const dirs = ASSET_DIRS[kind].map((d) => fileURLToPath(new URL(d, PACKAGE_ROOT)))
  const found = dirs.find((d) => existsSync(d))
  if (!found) throw new Error(`cairn-memory: ${kind} files are missing (looked in ${dirs.join(', ')}); reinstall the package`)
  return found
}

export function cairnAssets(): Plugin {
  let outDir = 'dist'
  const dirs = () => (Object.keys(SERVED) as Array<keyof typeof SERVED>).map((kind) => ({ prefix: SERVED[kind], dir: assetDir(kind) }))
  return {
    name: 'cairn-memory:assets',
    config() {
      // the worker imports shared chunks, which only module workers can
      return { worker: { format: 'es' }, optimizeDeps: { exclude: ['cairn-memory'] } }
    },
    configResolved(config) {
      outDir = resolve(config.root, config.build.outDir)
    },
    configureServer(server) {
      const served = dirs()
      server.middlewares.use((req, res, next) => {
        const path = decodeURIComponent(req.url?.split('?')[0] ?? '')
        for (const { prefix, dir } of served) {
          const at = `${server.config.base}${prefix}`
          if (!path.startsWith(at)) continue
          const file = resolve(dir, path.slice(at.length))
          // a missing file is a 404, never the SPA fallback (onnxruntime would call index.html a corrupt model)
          if (!file.startsWith(dir.endsWith(sep) ? dir : dir + sep) || !existsSync(file)) {
            res.statusCode = 404
            return res.end('Not found')
          }
          res.setHeader('Content-Type', TYPES[file.slice(file.lastIndexOf('.'))] ?? 'application/octet-stream')
          return void createReadStream(file).pipe(res)
        }
        next()
      })
    },
    async writeBundle() {
      await Promise.all(dirs().map(({ prefix, dir }) => cp(dir, join(outDir, prefix), { recursive: true })))
    },
  }
}

export default cairnAssets
