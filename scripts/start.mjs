// `npm start`: builds the app when dist/ is missing or stale, serves it on
// 127.0.0.1, and runs the sync server beside it with a claim key (kept in .data/sync/claim-key),
// so a memory's first device joins from the app with no token command. Ctrl-C stops both.
// Env: PORT (app, default 5173), SYNC_PORT (default 1234).
import { spawn } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { build, preview } from 'vite'

const root = fileURLToPath(new URL('..', import.meta.url))
const host = '127.0.0.1'
const appPort = Number(process.env.PORT ?? 5173)
const syncPort = Number(process.env.SYNC_PORT ?? 1234)
const configFile = join(root, 'vite.config.ts')
const distIndex = join(root, 'dist/index.html')
const syncCli = join(root, 'src/server/cli.ts')

// Inputs of the browser build; the sync server's own sources are not among them.
const sourceRoots = ['index.html', 'src', 'worker', 'public', 'vite.config.ts', 'svelte.config.js', 'package-lock.json']
const skip = new Set([join(root, 'src/server')])

function newestMtime(path) {
  if (skip.has(path) || !existsSync(path)) return 0
  const stat = statSync(path)
  if (!stat.isDirectory()) return stat.mtimeMs
  let newest = 0
  for (const entry of readdirSync(path)) newest = Math.max(newest, newestMtime(join(path, entry)))
  return newest
}

function needsBuild() {
  if (!existsSync(distIndex)) return 'dist/ is missing'
  const built = statSync(distIndex).mtimeMs
  const changed = Math.max(...sourceRoots.map((p) => newestMtime(join(root, p))))
  return changed > built ? 'sources changed since the last build' : undefined
}

const reason = needsBuild()
if (reason) {
  console.log(`Building the app (${reason})...`)
  await build({ root, configFile, logLevel: 'warn' })
}

let sync
if (existsSync(syncCli)) {
  const dataDir = join(root, '.data/sync')
  mkdirSync(dataDir, { recursive: true })
  sync = spawn(
    process.execPath,
    ['--import', 'tsx', syncCli, '--host', host, '--port', String(syncPort), '--data', '.data/sync', '--claim-key-file', '.data/sync/claim-key'],
    { cwd: root, stdio: 'inherit' },
  )
  sync.on('exit', (code, signal) => {
    sync = undefined
    if (!stopping) console.error(`Sync server stopped (${signal ?? `exit code ${code}`}); the app keeps running offline.`)
  })
}

const server = await preview({
  root,
  configFile,
  logLevel: 'warn',
  preview: { host, port: appPort, strictPort: true, open: false },
})

console.log(`\n  Cairn app:    http://${host}:${appPort}/`)
console.log(sync ? `  Sync server:  ws://${host}:${syncPort}` : '  Sync server:  unavailable (src/server/cli.ts does not exist yet)')
if (sync) {
  console.log('  Sync a memory here the first time: in the app, its Memory menu > Sync with a server,')
  console.log(`  server ws://${host}:${syncPort}, and the claim key the sync server printed above (also in .data/sync/claim-key)`)
  console.log('  as the token. Its other devices: "Open on another device" on the first one, then open the link there.')
}
console.log('  Press Ctrl-C to stop.\n')

let stopping = false
async function stop() {
  if (stopping) return
  stopping = true
  const exited = sync ? new Promise((done) => sync.once('exit', done)) : Promise.resolve()
  sync?.kill('SIGTERM')
  await Promise.all([server.close(), Promise.race([exited, new Promise((done) => setTimeout(done, 3000))])])
  sync?.kill('SIGKILL')
  process.exit(0)
}
process.on('SIGINT', stop)
process.on('SIGTERM', stop)
