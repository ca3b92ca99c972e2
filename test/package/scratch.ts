// Packs the repository as the registry would ship it and installs the tarball into a scratch
// project outside the repository, so tests see exactly what a user installs.
import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

export const repo = fileURLToPath(new URL('../../', import.meta.url))

export interface Scratch {
  root: string
  tarball: string
  /** A project with the tarball (and fake-indexeddb, for plain Node) installed. */
  project: string
}

const npm = (args: string[], cwd: string): string =>
  execFileSync('npm', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false' } })

export function packAndInstall(): Scratch {
  const root = mkdtempSync(join(tmpdir(), 'cairn-package-'))
  // prepack builds lib/ and assets/ first
  npm(['pack', '--pack-destination', root], repo)
  const tarball = join(root, readdirSync(root).find((f) => f.endsWith('.tgz'))!)
  const project = join(root, 'project')
  mkdirSync(project)
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'scratch', private: true, type: 'module' }))
  // the dependencies are in the npm cache already on any machine that installed the repository
  npm(['install', '--prefer-offline', tarball, 'fake-indexeddb@^6'], project)
  return { root, tarball, project }
}
