import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { isMemoryError } from '../../src/core/errors'
import type { Embedder } from '../../src/search/embedder'
import { createStaticEmbedder } from '../../src/search/static-embedder'
import { cacheStorageModelCache } from '../../src/search/model-cache'
import { MemoryCacheStorage, serveFiles, type FileServer } from './http-fixture'

const DIR = fileURLToPath(new URL('../../public/models/', import.meta.url))
const read = (file: string) => new Uint8Array(readFileSync(join(DIR, file)))
const manifestBytes = read('cairn-glove-100d.json')
const manifest = JSON.parse(new TextDecoder().decode(manifestBytes)) as { id: string; dimensions: number; model: { file: string; sha256: string }; vocabulary: { file: string; size: number } }
const modelBytes = read(manifest.model.file)
const vocabularyBytes = read(manifest.vocabulary.file)

const fromFiles = (overrides: { model?: Uint8Array; vocabulary?: Uint8Array } = {}) =>
  createStaticEmbedder({ manifest: manifestBytes, model: modelBytes, vocabulary: vocabularyBytes, cache: null, ...overrides })

const cosine = (a: Float32Array, b: Float32Array) => a.reduce((sum, x, i) => sum + x * b[i]!, 0)
const norm = (v: Float32Array) => Math.sqrt(cosine(v, v))

async function expectModelFailed(promise: Promise<unknown>): Promise<void> {
  const err = await promise.then(() => undefined, (e: unknown) => e)
  expect(isMemoryError(err) && err.code).toBe('model_failed')
}

describe('static GloVe embedder', () => {
  let embedder: Embedder
  beforeAll(async () => {
    embedder = await fromFiles()
  })
  afterAll(() => embedder.dispose?.())

  it('describes the shipped model, whose checksum is the sha256 of its bytes', () => {
    expect(embedder.id).toBe('cairn-glove-100d@1')
    expect(embedder.dimensions).toBe(100)
    expect(embedder.checksum).toBe(createHash('sha256').update(modelBytes).digest('hex'))
    expect(embedder.checksum).toBe(manifest.model.sha256)
    expect(new TextDecoder().decode(vocabularyBytes).trimEnd().split('\n')).toHaveLength(manifest.vocabulary.size)
  })

  it('scores similar words above unrelated ones', async () => {
    const [physician, doctor, guitar, car, automobile, banana] = await embedder.embed(['physician', 'doctor', 'guitar', 'car', 'automobile', 'banana'])
    expect(cosine(physician!, doctor!)).toBeGreaterThan(cosine(physician!, guitar!) + 0.3)
    expect(cosine(car!, automobile!)).toBeGreaterThan(cosine(car!, banana!) + 0.3)
  })

  it('scores related sentences above unrelated ones', async () => {
    const triples: [string, string, string][] = [
      ['The cat sat on the mat.', 'A kitten rested on the rug.', 'Stock markets fell sharply today.'],
      ['She plays the violin in an orchestra.', 'He is a musician in a symphony.', 'The server crashed after the update.'],
      ['Alice is the lead engineer on the payments project.', 'Bob manages software development for billing.', 'We hiked up the mountain at dawn.'],
      ["The patient's fever didn't go down.", 'The doctor treated her illness at the hospital.', 'The football team won the championship.'],
    ]
    for (const [anchor, related, unrelated] of triples) {
      const [a, r, u] = await embedder.embed([anchor, related, unrelated])
      expect(cosine(a!, r!), anchor).toBeGreaterThan(cosine(a!, u!))
    }
  })

  it('returns unit vectors, and zero vectors for texts with no known word', async () => {
    const vectors = await embedder.embed(['Hello world', 'a much longer sentence about graph memory for agents', '', '!!! ???', 'qzxvkj wxqpz'])
    expect(vectors.map((v) => v.length)).toEqual([100, 100, 100, 100, 100])
    expect(norm(vectors[0]!)).toBeCloseTo(1, 5)
    expect(norm(vectors[1]!)).toBeCloseTo(1, 5)
    for (const v of vectors.slice(2)) expect(Array.from(v).every((x) => x === 0)).toBe(true)
  })

  it('is deterministic across instances and equal in a batch and alone', async () => {
    const texts = ['Project Atlas ships in May', 'u.s. e-mail servers', "don't repeat yourself", 'graph', 'the the the of and', 'doctor']
    const other = await fromFiles()
    const batch = await embedder.embed(texts)
    const again = await other.embed(texts)
    await other.dispose?.()
    expect(again.map((v) => Array.from(v))).toEqual(batch.map((v) => Array.from(v)))
    for (const [i, text] of texts.entries()) {
      const [single] = await embedder.embed([text])
      for (let d = 0; d < 100; d++) expect(single![d]).toBeCloseTo(batch[i]![d]!, 6)
    }
  })

  it('treats repeated words as one bag of words (weights add up)', async () => {
    const [once, twice, mixed] = await embedder.embed(['doctor', 'doctor doctor', 'doctor guitar'])
    expect(cosine(once!, twice!)).toBeCloseTo(1, 5)
    expect(cosine(once!, mixed!)).toBeLessThan(0.95)
  })

  it('fails with model_failed when the model or vocabulary does not match the manifest', async () => {
    const model = modelBytes.slice()
    model[model.length - 10]! ^= 0xff
    await expectModelFailed(fromFiles({ model }))
    const vocabulary = vocabularyBytes.slice()
    vocabulary[0] = 'T'.charCodeAt(0)
    await expectModelFailed(fromFiles({ vocabulary }))
  })
})

describe('static GloVe embedder over HTTP', () => {
  let server: FileServer
  beforeAll(async () => {
    server = await serveFiles({
      'models/cairn-glove-100d.json': manifestBytes,
      'models/cairn-glove-100d.onnx': modelBytes,
      'models/cairn-glove-100d.vocab.txt': vocabularyBytes,
    })
  })
  afterAll(() => server.close())

  it('fetches manifest, model and vocabulary from a base URL', async () => {
    const embedder = await createStaticEmbedder({ baseUrl: `${server.url}models/`, cache: null })
    expect(embedder.checksum).toBe(manifest.model.sha256)
    const [fetched] = await embedder.embed(['physician'])
    await embedder.dispose?.()
    const local = await fromFiles()
    const [expected] = await local.embed(['physician'])
    await local.dispose?.()
    expect(Array.from(fetched!)).toEqual(Array.from(expected!))
    expect(server.requests.get('models/cairn-glove-100d.onnx')).toBe(1)
  })

  it('works offline from the model cache once it has loaded', async () => {
    const cache = cacheStorageModelCache(new MemoryCacheStorage())
    const online = await createStaticEmbedder({ baseUrl: `${server.url}models/`, cache })
    const [expected] = await online.embed(['offline first'])
    await online.dispose?.()
    const saved = new Map(server.files)
    server.files.clear()
    try {
      const offline = await createStaticEmbedder({ baseUrl: `${server.url}models/`, cache })
      const [vector] = await offline.embed(['offline first'])
      await offline.dispose?.()
      expect(Array.from(vector!)).toEqual(Array.from(expected!))
      await expectModelFailed(createStaticEmbedder({ baseUrl: `${server.url}models/`, cache: null }))
    } finally {
      for (const [path, body] of saved) server.files.set(path, body)
    }
  })

  it('known to be offline, reads the manifest from the cache without asking the network', async () => {
    const cache = cacheStorageModelCache(new MemoryCacheStorage())
    const online = await createStaticEmbedder({ baseUrl: `${server.url}models/`, cache })
    await online.dispose?.()
    const asked = server.requests.get('models/cairn-glove-100d.json') ?? 0
    vi.stubGlobal('navigator', { onLine: false })
    try {
      const offline = await createStaticEmbedder({ baseUrl: `${server.url}models/`, cache })
      await offline.dispose?.()
      expect(server.requests.get('models/cairn-glove-100d.json') ?? 0).toBe(asked)
    } finally {
      vi.unstubAllGlobals()
    }
    // online again, the manifest is asked of the network first (it names the current checksums)
    const again = await createStaticEmbedder({ baseUrl: `${server.url}models/`, cache })
    await again.dispose?.()
    expect(server.requests.get('models/cairn-glove-100d.json')).toBe(asked + 1)
  })

  it('fails with model_failed when the served model was replaced', async () => {
    const tampered = modelBytes.slice()
    tampered[100]! ^= 1
    server.files.set('models/cairn-glove-100d.onnx', tampered)
    try {
      await expectModelFailed(createStaticEmbedder({ manifest: `${server.url}models/cairn-glove-100d.json`, cache: null }))
    } finally {
      server.files.set('models/cairn-glove-100d.onnx', modelBytes)
    }
  })
})
