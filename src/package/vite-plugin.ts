// `cairn-memory/vite`: a Vite plugin that serves the default model and the onnxruntime wasm
// runtime at `${base}models/` and `${base}ort/` in dev and writes them into the build, which is
// where the library looks for them in a browser by default.
import { resolve, sep } from 'node:path'
import type { Plugin } from 'vite'
import { assetDir, openServed, SERVED_AS, writeServedAssets, type AssetKind } from './assets'

const TYPES: Record<string, string> = { '.wasm': 'application/wasm', '.mjs': 'text/javascript', '.json': 'application/json', '.onnx': 'application/octet-stream', '.txt': 'text/plain; charset=utf-8', '.md': 'text/markdown; charset=utf-8' }

export function cairnAssets(): Plugin {
  let outDir = 'dist'
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
      const served = (Object.keys(SERVED_AS) as AssetKind[]).map((kind) => ({ prefix: SERVED_AS[kind], dir: assetDir(kind) }))
      server.middlewares.use((req, res, next) => {
        const path = decodeURIComponent(req.url?.split('?')[0] ?? '')
        for (const { prefix, dir } of served) {
          const at = `${server.config.base}${prefix}`
          if (!path.startsWith(at)) continue
          const file = resolve(dir, path.slice(at.length))
          // a missing file is a 404, never the SPA fallback (onnxruntime would call index.html a corrupt model)
          const stream = file.startsWith(dir.endsWith(sep) ? dir : dir + sep) ? openServed(dir, file.slice(dir.length).replace(/^[\\/]+/, '')) : null
          if (!stream) {
            res.statusCode = 404
            return res.end('Not found')
          }
          res.setHeader('Content-Type', TYPES[file.slice(file.lastIndexOf('.'))] ?? 'application/octet-stream')
          return void stream.pipe(res)
        }
        next()
      })
    },
    async writeBundle() {
      await writeServedAssets(outDir)
    },
  }
}

export default cairnAssets
