// Builds the fault-test page (page/) once for the browser fault tests, with the app's Vite
// config, into a directory of this run. CAIRN_FAULTS_DIST=<dir> serves an existing build instead.
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { build } from 'vite'
import type { TestProject } from 'vitest/node'

const root = fileURLToPath(new URL('../..', import.meta.url))
/** The page's entry, relative to the repository root; the build keeps that path. */
export const FAULT_PAGE = 'test/faults/page/index.html'

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const existing = process.env.CAIRN_FAULTS_DIST
  if (existing) {
    project.provide('faultPageDir', resolve(root, existing))
    return async () => undefined
  }
  const outDir = await mkdtemp(join(tmpdir(), 'cairn-faults-dist-'))
  await build({
    root,
    configFile: join(root, 'vite.config.ts'),
    mode: 'production',
    logLevel: 'warn',
    build: { outDir, emptyOutDir: true, rolldownOptions: { input: join(root, FAULT_PAGE) } },
  })
  project.provide('faultPageDir', outDir)
  return () => rm(outDir, { recursive: true, force: true })
}
