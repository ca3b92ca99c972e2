// Builds the app once before the browser tests, so they exercise exactly what
// `npm run build` produces, with one test page beside it (smoke-page/: the infrastructure
// probe, which the app does not ship). The build goes to a directory of this run rather
// than dist/, so concurrent runs and a running `npm start` do not clobber it.
// CAIRN_E2E_DIST=<dir> serves an existing build of these inputs instead (faster while iterating).
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { build } from 'vite'
import type { TestProject } from 'vitest/node'

const root = fileURLToPath(new URL('../..', import.meta.url))
/** The smoke probe's page, relative to the repository root; the build keeps that path. */
export const SMOKE_PAGE = 'test/e2e/smoke-page/index.html'

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const existing = process.env.CAIRN_E2E_DIST
  if (existing) {
    project.provide('distDir', resolve(root, existing))
    return async () => undefined
  }
  const outDir = await mkdtemp(join(tmpdir(), 'cairn-e2e-dist-'))
  await build({
    root,
    configFile: join(root, 'vite.config.ts'),
    mode: 'production',
    logLevel: 'warn',
    build: { outDir, emptyOutDir: true, rolldownOptions: { input: { index: join(root, 'index.html'), smoke: join(root, SMOKE_PAGE) } } },
  })
  project.provide('distDir', outDir)
  return () => rm(outDir, { recursive: true, force: true })
}
