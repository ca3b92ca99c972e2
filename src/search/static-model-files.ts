// The shipped static model's file formats: the JSON manifest and the vocabulary text
// (`word<TAB>weight` per line, line n = token id n). Written by `scripts/build-model.ts`.

import { MemoryError } from '../core/errors'

export const STATIC_MODEL_ID = 'cairn-glove-100d@1'
export const STATIC_MANIFEST_FILE = 'cairn-glove-100d.json'

export interface StaticModelManifest {
  id: string
  dimensions: number
  tokenizer: string
  model: { file: string; sha256: string; bytes: number }
  vocabulary: { file: string; sha256: string; size: number }
  /** How token weights were derived; informational, the weights are in the vocabulary file. */
  weighting: Record<string, unknown>
  quantization: string
  source: Record<string, unknown>
}

export interface StaticVocabulary {
  ids: Map<string, number>
  weights: Float32Array
}

export function formatVocabulary(entries: readonly { word: string; weight: number }[]): string {
  return entries.map(({ word, weight }) => `${word}\t${weight}`).join('\n') + '\n'
}

export function parseVocabulary(text: string): StaticVocabulary {
  const lines = text.split('\n')
  if (lines[lines.length - 1] === '') lines.pop()
  const ids = new Map<string, number>()
  const weights = new Float32Array(lines.length)
  lines.forEach((line, id) => {
    const tab = line.indexOf('\t')
    const weight = Number(line.slice(tab + 1))
    if (tab <= 0 || !Number.isFinite(weight)) {
      throw new MemoryError('model_failed', `The vocabulary file is malformed at line ${id + 1}; regenerate it with \`npm run build:model\`.`, { line: id + 1 })
    }
    ids.set(line.slice(0, tab), id)
    weights[id] = weight
  })
  return { ids, weights }
}

export function parseManifest(value: unknown): StaticModelManifest {
  const m = value as Partial<StaticModelManifest> | null
  const ok =
    typeof m?.id === 'string' &&
    typeof m.dimensions === 'number' &&
    typeof m.model?.file === 'string' &&
    typeof m.model.sha256 === 'string' &&
    typeof m.vocabulary?.file === 'string' &&
    typeof m.vocabulary.sha256 === 'string'
  if (!ok) throw new MemoryError('model_failed', 'The static model manifest is missing id, dimensions, model or vocabulary fields.', {})
  return m as StaticModelManifest
}
