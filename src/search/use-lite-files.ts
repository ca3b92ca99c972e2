// The USE-lite model's manifest (written by `scripts/build-use-model.ts` beside the ONNX file and
// the vocabulary) and the id a memory's retrieval config records for it.

import { MemoryError } from '../core/errors'

export const USE_LITE_ID = 'use-lite-512@1'
export const USE_LITE_MANIFEST_FILE = 'cairn-use-lite.json'

export interface UseLiteManifest {
  id: string
  dimensions: number
  /** Tokens the model reads per text; the rest are dropped, as the TF.js model drops them. */
  maxTokens: number
  model: { file: string; sha256: string; bytes: number }
  vocabulary: { file: string; sha256: string; size: number }
  source: Record<string, unknown>
}

export function parseUseLiteManifest(value: unknown): UseLiteManifest {
  const m = value as Partial<UseLiteManifest> | null
  const ok =
    typeof m?.id === 'string' &&
    typeof m.dimensions === 'number' &&
    typeof m.maxTokens === 'number' &&
    m.maxTokens > 0 &&
    typeof m.model?.file === 'string' &&
    typeof m.model.sha256 === 'string' &&
    typeof m.vocabulary?.file === 'string' &&
    typeof m.vocabulary.sha256 === 'string'
  if (!ok) throw new MemoryError('model_failed', 'The USE-lite manifest is missing id, dimensions, maxTokens, model or vocabulary fields; rebuild it with `npm run build:use-model`.', {})
  return m as UseLiteManifest
}
