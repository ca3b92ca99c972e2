#!/usr/bin/env node
// Builds the extension from the cairn-memory package as a user installs it:
//   node examples/mv3-extension/build.mjs [--tarball cairn-memory-x.y.z.tgz] [--out DIR]
// Without --tarball it packs the repository first (`npm pack`, which builds lib/). The tarball
// and esbuild are installed into a scratch project; src/memory.js (the page) and
// src/background.js (the background service worker) are bundled against that install, and
// `cairn assets` writes the package's model and onnxruntime runtime beside them. Load DIR
// (default examples/mv3-extension/dist) with "Load unpacked" in chrome://extensions.
import { execFileSync } from 'node:child_process'
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'

const here = dirname(fileURLToPath(import.meta.url))
const repo = resolve(here, '../..')
const { values } = parseArgs({ options: { tarball: { type: 'string' }, out: { type: 'string' } } })
const out = resolve(values.out ?? join(here, 'dist'))
const npm = (args, cwd) => execFileSync('npm', args, { cwd, stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8', env: { ...process.env, npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false' } })

const scratch = mkdtempSync(join(tmpdir(), 'cairn-mv3-'))
try {
  let tarball = values.tarball && resolve(values.tarball)
  if (!tarball) {
    npm(['pack', '--pack-destination', scratch], repo)
    tarball = join(scratch, readdirSync(scratch).find((f) => f.endsWith('.tgz')))
  }
  const project = join(scratch, 'project')
  mkdirSync(project)
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'cairn-mv3-extension', private: true, type: 'module' }))
  // the esbuild the repository builds with, from the npm cache
  const esbuildVersion = JSON.parse(readFileSync(join(repo, 'node_modules/esbuild/package.json'), 'utf8')).version
  npm(['install', '--prefer-offline', tarball, `esbuild@${esbuildVersion}`], project)
  cpSync(join(here, 'src'), join(project, 'src'), { recursive: true })

  rmSync(out, { recursive: true, force: true })
  mkdirSync(out, { recursive: true })
  const { build } = await import(join(project, 'node_modules/esbuild/lib/main.js'))
  // the page and the background service worker, each one file (a service worker may not import() chunks)
  await build({
    absWorkingDir: project,
    entryPoints: ['src/memory.js', 'src/background.js'],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    outdir: out,
    logLevel: 'warning',
  })
  for (const file of ['manifest.json', 'memory.html']) cpSync(join(here, file), join(out, file))
  // the model and the runtime, as a page loads them (the package keeps the wasm gzipped)
  execFileSync(join(project, 'node_modules/.bin/cairn'), ['assets', out], { stdio: ['ignore', 'ignore', 'inherit'] })
  console.log(`built ${out}`)
} finally {
  rmSync(scratch, { recursive: true, force: true })
}
