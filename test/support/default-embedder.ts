// The embedded default model, read from public/models as the library would fetch it.
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import type { Embedder } from '../../src/search/embedder'
import { createStaticEmbedder } from '../../src/search/static-embedder'

const dir = fileURLToPath(new URL('../../public/models/', import.meta.url))
let shared: Promise<Embedder> | undefined

export function defaultEmbedder(): Promise<Embedder> {
  const read = (f: string): Uint8Array => new Uint8Array(readFileSync(dir + f))
  shared ??= createStaticEmbedder({ manifest: read('cairn-glove-100d.json'), model: read('cairn-glove-100d.onnx'), vocabulary: read('cairn-glove-100d.vocab.txt'), cache: null })
  return shared
}
