// `npm run build:lib`: the installable package. ESM bundles in lib/ (a browser build and a Node
// build of the library, the worker, the Node entry, the CLI and the Vite plugin), .d.ts files in
// lib/types/, and the default model and the onnxruntime wasm runtime copied into assets/.
import { execFileSync } from 'node:child_process'
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { gzipSync } from 'node:zlib'
import { build, type BuildOptions } from 'esbuild'

const root = fileURLToPath(new URL('../', import.meta.url))
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { dependencies: Record<string, string> }
// What the package depends on stays an import; what only Node code needs (the MCP SDK, ws, the
// sync server, fake-indexeddb) and onnxruntime-web's JS are bundled, so a browser project installs neither.
/** Model files the package keeps gzipped. */
const PACKED_MODEL_FILE = /\.(onnx|vocab\.txt)$/
const external = Object.keys(pkg.dependencies).flatMap((name) => [name, `${name}/*`])

const common: BuildOptions = {
  absWorkingDir: root,
  bundle: true,
  format: 'esm',
  splitting: true,
  target: 'es2022',
  outdir: 'lib',
  chunkNames: '[name]-[hash]',
  external,
  sourcemap: false,
  legalComments: 'linked',
  logLevel: 'warning',
}

rmSync(join(root, 'lib'), { recursive: true, force: true })
rmSync(join(root, 'assets'), { recursive: true, force: true })

await build({
  ...common,
  platform: 'browser',
  entryPoints: { index: 'src/index.ts', worker: 'worker/engine.worker.ts' },
  // the wasm backend alone, its wasm glue bundled in (no run-time import(), which service
  // workers forbid); the .wasm itself is fetched from `wasmPaths` (see cairn-memory/vite)
  alias: { 'onnxruntime-web': 'onnxruntime-web/wasm' },
  define: { __CAIRN_ORT_GLUE_BUNDLED__: 'true' },
  chunkNames: 'browser-[name]-[hash]',
})

await build({
  ...common,
  platform: 'node',
  // room-worker: the sync server's second thread, started from its own file beside the bundle
  entryPoints: { 'index.node': 'src/index.ts', node: 'src/node.ts', cli: 'src/cli/main.ts', vite: 'src/package/vite-plugin.ts', 'room-worker': 'src/server/room-worker.ts' },
  external: [...external, 'vite'],
  // @y/websocket-server imports y-leveldb (native leveldown) for a mode Cairn never enables
  alias: { 'y-leveldb': './src/package/no-leveldb.ts' },
  chunkNames: 'node-[name]-[hash]',
  // bundled CommonJS (ws) requires Node builtins
  banner: { js: "import { createRequire as __cairnRequire } from 'node:module'; const require = __cairnRequire(import.meta.url);" },
})

// The CLI runs as a bin: a shebang on its entry.
const cli = join(root, 'lib/cli.js')
writeFileSync(cli, `#!/usr/bin/env node\n${readFileSync(cli, 'utf8')}`, { mode: 0o755 })

// Declarations: tsc emits them, then relative specifiers get explicit `.js` so `node16`/`nodenext` resolution reads them too.
execFileSync(process.execPath, [createRequire(import.meta.url).resolve('typescript/bin/tsc'), '-p', 'tsconfig.lib.json'], { cwd: root, stdio: 'inherit' })
for (const file of walk(join(root, 'lib/types'))) {
  if (!file.endsWith('.d.ts')) continue
  const text = readFileSync(file, 'utf8').replace(/(from\s+|import\()(['"])(\.{1,2}\/[^'"]+)\2/g, (whole, lead: string, q: string, spec: string) => {
    if (/\.(js|json)$/.test(spec)) return whole
    const base = join(dirname(file), spec)
    const target = exists(`${base}.d.ts`) ? `${spec}.js` : exists(join(base, 'index.d.ts')) ? `${spec}/index.js` : spec
    return `${lead}${q}${target}${q}`
  })
  writeFileSync(file, text)
}

// Package assets: the default model and the one onnxruntime-web runtime the wasm backend loads.
const ortDist = dirname(createRequire(import.meta.url).resolve('onnxruntime-web/ort-wasm-simd-threaded.wasm'))
// the large files are kept gzipped (a third smaller in every install); `cairn-memory/vite`,
// `cairn assets` and the Node loaders expand them (src/package/assets.ts)
copyAll(join(root, 'public/models'), join(root, 'assets/models'), (name) => !PACKED_MODEL_FILE.test(name))
for (const name of readdirSync(join(root, 'public/models'))) if (PACKED_MODEL_FILE.test(name)) gzipInto(join(root, 'public/models', name), join(root, 'assets/models', `${name}.gz`))
copyAll(ortDist, join(root, 'assets/ort'), (name) => name === 'ort-wasm-simd-threaded.mjs')
// the wasm too (14 MB -> 3.7 MB)
gzipInto(join(ortDist, 'ort-wasm-simd-threaded.wasm'), join(root, 'assets/ort/ort-wasm-simd-threaded.wasm.gz'))
const ortPkg = JSON.parse(readFileSync(join(ortDist, '../package.json'), 'utf8')) as { version: string; license: string }
writeFileSync(join(root, 'assets/ort/NOTICE.md'), `ort-wasm-simd-threaded.mjs and ort-wasm-simd-threaded.wasm (kept here gzipped) are from onnxruntime-web ${ortPkg.version} (${ortPkg.license} license, Copyright (c) Microsoft Corporation), https://github.com/microsoft/onnxruntime\n`)

const size = walk(join(root, 'lib')).reduce((sum, f) => sum + statSync(f).size, 0)
console.log(`lib/: ${(size / 1024).toFixed(0)} kB in ${walk(join(root, 'lib')).length} files; assets/ copied`)

function gzipInto(from: string, to: string): void {
  writeFileSync(to, gzipSync(readFileSync(from), { level: 9 }))
}
function walk(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(join(dir, e.name)) : [join(dir, e.name)]))
}
function exists(path: string): boolean {
  try {
    return statSync(path).isFile()
  } catch {
    return false
  }
}
function copyAll(from: string, to: string, keep: (name: string) => boolean): void {
  mkdirSync(to, { recursive: true })
  for (const name of readdirSync(from)) if (keep(name)) copyFileSync(join(from, name), join(to, name))
}
