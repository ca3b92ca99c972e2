// Which embedder an evaluation runs with: `--embedder glove` (the shipped default) or
// `--embedder use-lite` (built by `npm run build:use-model`; `--use-model DIR` where it was written).

import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { createDefaultEmbedder } from '../../src/search/default-embedder'
import type { Embedder } from '../../src/search/embedder'
import { parseUseLiteManifest, USE_LITE_MANIFEST_FILE } from '../../src/search/use-lite-files'
import { createUseLiteEmbedder } from '../../src/search/use-lite-embedder'

export const EMBEDDERS = ['glove', 'use-lite'] as const
export type EmbedderChoice = (typeof EMBEDDERS)[number]

export function embedderChoice(argv: string[]): { name: EmbedderChoice; useModelDir: string } {
  const at = argv.indexOf('--embedder')
  const name = at >= 0 ? argv[at + 1] : 'glove'
  if (!EMBEDDERS.includes(name as EmbedderChoice)) throw new Error(`--embedder takes one of ${EMBEDDERS.join(', ')}`)
  const dirAt = argv.indexOf('--use-model')
  return { name: name as EmbedderChoice, useModelDir: dirAt >= 0 ? argv[dirAt + 1]! : '.cache/models' }
}

/** The USE-lite files as written by the build script, read from disk. */
export async function loadUseLite(dir: string): Promise<Embedder> {
  if (!existsSync(join(dir, USE_LITE_MANIFEST_FILE))) throw new Error(`no ${USE_LITE_MANIFEST_FILE} in ${dir}: run \`npm run build:use-model\` first`)
  const read = (file: string) => new Uint8Array(readFileSync(join(dir, file)))
  const manifest = parseUseLiteManifest(JSON.parse(readFileSync(join(dir, USE_LITE_MANIFEST_FILE), 'utf8')))
  return createUseLiteEmbedder({ manifest, model: read(manifest.model.file), vocabulary: read(manifest.vocabulary.file), cache: null })
}

export function loadEmbedder(choice: { name: EmbedderChoice; useModelDir: string }): Promise<Embedder> {
  return choice.name === 'use-lite' ? loadUseLite(choice.useModelDir) : createDefaultEmbedder()
}
