import { createHash } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { isMemoryError } from '../../src/core/errors'
import type { Embedder } from '../../src/search/embedder'
import { cacheStorageModelCache, MODEL_CACHE_NAME } from '../../src/search/model-cache'
import { createTransformerEmbedder } from '../../src/search/transformer-embedder'
import { MemoryCacheStorage, serveFiles, type FileServer } from './http-fixture'
import { HIDDEN, referenceEmbedding, tinyBertModel, tinyTokenizerJson } from './tiny-bert'

const modelBytes = tinyBertModel()
const tokenizerBytes = new TextEncoder().encode(JSON.stringify(tinyTokenizerJson()))
const sha256 = createHash('sha256').update(modelBytes).digest('hex')

const cosine = (a: Float32Array, b: Float32Array) => a.reduce((sum, x, i) => sum + x * b[i]!, 0)

async function expectModelFailed(promise: Promise<unknown>): Promise<void> {
  const err = await promise.then(() => undefined, (e: unknown) => e)
  expect(isMemoryError(err) && err.code).toBe('model_failed')
}

describe('transformer embedder on a tiny BERT-shaped model', () => {
  let server: FileServer
  let embedder: Embedder
  beforeAll(async () => {
    server = await serveFiles({ 'tiny/model.onnx': modelBytes, 'tiny/tokenizer.json': tokenizerBytes })
    embedder = await createTransformerEmbedder({ id: 'tiny-bert@1', model: `${server.url}tiny/model.onnx`, tokenizer: `${server.url}tiny/tokenizer.json`, sha256, cache: null })
  })
  afterAll(async () => {
    await embedder.dispose?.()
    await server.close()
  })

  it('reports id, hidden size and the sha256 of the model bytes', () => {
    expect(embedder.id).toBe('tiny-bert@1')
    expect(embedder.dimensions).toBe(HIDDEN)
    expect(embedder.checksum).toBe(sha256)
  })

  it('matches the network computed by hand: WordPiece ids, [CLS]/[SEP], masked mean, L2 norm', async () => {
    const [doctors, plain] = await embedder.embed(['The Doctors!', 'my guitar'])
    const expected = referenceEmbedding(['[CLS]', 'the', 'doctor', '##s', '!', '[SEP]'])
    for (let h = 0; h < HIDDEN; h++) expect(doctors![h]).toBeCloseTo(expected[h]!, 5)
    const expectedPlain = referenceEmbedding(['[CLS]', 'my', 'guitar', '[SEP]'])
    for (let h = 0; h < HIDDEN; h++) expect(plain![h]).toBeCloseTo(expectedPlain[h]!, 5)
  })

  it('scores physician/doctor above physician/guitar, and output varies by token and order', async () => {
    const [physician, doctor, guitar, ab, ba] = await embedder.embed(['physician', 'doctor', 'guitar', 'cat dog', 'dog cat'])
    expect(cosine(physician!, doctor!)).toBeGreaterThan(cosine(physician!, guitar!))
    expect(cosine(physician!, guitar!)).toBeLessThan(0.99)
    expect(Array.from(ab!)).not.toEqual(Array.from(ba!))
  })

  it('is deterministic, unit length, and equal in a padded batch and alone', async () => {
    const texts = ['a', 'the nurse plays the piano in the hospital band', 'server bug', 'unknownword', '']
    const batch = await embedder.embed(texts)
    const again = await embedder.embed(texts)
    expect(again.map((v) => Array.from(v))).toEqual(batch.map((v) => Array.from(v)))
    for (const [i, text] of texts.entries()) {
      expect(Math.sqrt(cosine(batch[i]!, batch[i]!))).toBeCloseTo(1, 5)
      const [single] = await embedder.embed([text])
      for (let h = 0; h < HIDDEN; h++) expect(single![h]).toBeCloseTo(batch[i]![h]!, 6)
    }
  })

  it('truncates long texts to maxLength tokens, keeping the closing [SEP]', async () => {
    const short = await createTransformerEmbedder({ id: 'tiny-bert@1', model: modelBytes, tokenizer: tinyTokenizerJson(), maxLength: 4, cache: null })
    const [vector] = await short.embed(['cat dog river mountain'])
    await short.dispose?.()
    const expected = referenceEmbedding(['[CLS]', 'cat', 'dog', '[SEP]'])
    for (let h = 0; h < HIDDEN; h++) expect(vector![h]).toBeCloseTo(expected[h]!, 5)
  })

  it('loads from a user-chosen file (Blob/File) with the same result as the URL', async () => {
    const file = new File([modelBytes as Uint8Array<ArrayBuffer>], 'model.onnx')
    const fromFile = await createTransformerEmbedder({ id: 'tiny-bert@1', model: file, tokenizer: new Blob([tokenizerBytes as Uint8Array<ArrayBuffer>]), cache: null })
    const fromBuffer = await createTransformerEmbedder({ id: 'tiny-bert@1', model: modelBytes.slice().buffer, tokenizer: tinyTokenizerJson(), cache: null })
    expect(fromFile.checksum).toBe(sha256)
    const [a] = await fromFile.embed(['blue river'])
    const [b] = await fromBuffer.embed(['blue river'])
    const [c] = await embedder.embed(['blue river'])
    await fromFile.dispose?.()
    await fromBuffer.dispose?.()
    expect(Array.from(a!)).toEqual(Array.from(c!))
    expect(Array.from(b!)).toEqual(Array.from(c!))
  })

  it('fails with model_failed on a checksum mismatch, a missing file, or bytes that are not a model', async () => {
    await expectModelFailed(createTransformerEmbedder({ id: 'x', model: `${server.url}tiny/model.onnx`, tokenizer: tinyTokenizerJson(), sha256: '0'.repeat(64), cache: null }))
    await expectModelFailed(createTransformerEmbedder({ id: 'x', model: `${server.url}tiny/missing.onnx`, tokenizer: tinyTokenizerJson(), cache: null }))
    await expectModelFailed(createTransformerEmbedder({ id: 'x', model: tokenizerBytes, tokenizer: tinyTokenizerJson(), cache: null }))
  })
})

describe('transformer model caching', () => {
  let server: FileServer
  beforeAll(async () => {
    server = await serveFiles({ 'm/model.onnx': modelBytes, 'm/tokenizer.json': tokenizerBytes })
  })
  afterAll(() => server.close())

  it('downloads once, then loads from Cache Storage; a damaged cache entry is replaced', async () => {
    const storage = new MemoryCacheStorage()
    const cache = cacheStorageModelCache(storage)
    const modelUrl = `${server.url}m/model.onnx`
    const options = { id: 'tiny-bert@1', model: modelUrl, tokenizer: `${server.url}m/tokenizer.json`, sha256, cache }

    const first = await createTransformerEmbedder(options)
    const [expected] = await first.embed(['doctor'])
    await first.dispose?.()
    expect(server.requests.get('m/model.onnx')).toBe(1)
    expect(storage.caches.get(MODEL_CACHE_NAME)?.has(modelUrl)).toBe(true)

    const second = await createTransformerEmbedder(options)
    expect(server.requests.get('m/model.onnx')).toBe(1)
    expect(server.requests.get('m/tokenizer.json')).toBe(1)
    const [cached] = await second.embed(['doctor'])
    await second.dispose?.()
    expect(Array.from(cached!)).toEqual(Array.from(expected!))

    // Corrupt the cached copy: the checksum catches it and the file is fetched again.
    const damaged = modelBytes.slice()
    damaged[damaged.length - 5]! ^= 0xff
    await cache.put(modelUrl, damaged)
    const third = await createTransformerEmbedder(options)
    await third.dispose?.()
    expect(server.requests.get('m/model.onnx')).toBe(2)
    const repaired = await cache.get(modelUrl)
    expect(createHash('sha256').update(repaired!).digest('hex')).toBe(sha256)
  })

  it('fails with model_failed when the server copy no longer matches the expected checksum', async () => {
    const cache = cacheStorageModelCache(new MemoryCacheStorage())
    const tampered = modelBytes.slice()
    tampered[tampered.length - 5]! ^= 0xff
    server.files.set('m/model.onnx', tampered)
    try {
      await expectModelFailed(createTransformerEmbedder({ id: 'x', model: `${server.url}m/model.onnx`, tokenizer: tinyTokenizerJson(), sha256, cache }))
      expect(await cache.get(`${server.url}m/model.onnx`)).toBeUndefined()
    } finally {
      server.files.set('m/model.onnx', modelBytes)
    }
  })
})
