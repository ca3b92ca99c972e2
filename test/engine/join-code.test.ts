import { describe, expect, it } from 'vitest'
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb'
import { createMemory, decodeJoinCode, encodeJoinCode, isJoinCode, MemoryError } from '../../src/index'
import { JOIN_CODE_PREFIX } from '../../src/core/join-code'
import { defaultEmbedder } from '../support/default-embedder'

const info = {
  id: 'm1abc-xyz',
  name: 'Field notes “2026”',
  retrieval: { embedder: 'bm25-only', modelChecksum: '', dimensions: 0, weights: { text: 1, vector: 0 }, snippetLength: 120 },
}

describe('join codes', () => {
  it('carry the id, name, fixed retrieval config and server, and read back the same', () => {
    const code = encodeJoinCode(info, 'ws://127.0.0.1:1234')
    expect(isJoinCode(code)).toBe(true)
    expect(code).toMatch(/^cairn-join:[A-Za-z0-9_-]+$/)
    expect(decodeJoinCode(`  ${code}\n`)).toEqual({ id: info.id, name: info.name, retrieval: { embedder: 'bm25-only', weights: { text: 1, vector: 0 }, snippetLength: 120 }, serverUrl: 'ws://127.0.0.1:1234' })
    expect(decodeJoinCode(encodeJoinCode(info))).not.toHaveProperty('serverUrl')
  })

  it('a pairing code also carries the joining device\'s connection token, and only with a server', () => {
    const token = 'cairn_' + 'x'.repeat(43)
    const code = decodeJoinCode(encodeJoinCode(info, 'ws://127.0.0.1:1234', token))
    expect(code.token).toBe(token)
    expect(code.serverUrl).toBe('ws://127.0.0.1:1234')
    expect(decodeJoinCode(encodeJoinCode(info, 'ws://127.0.0.1:1234'))).not.toHaveProperty('token')
    expect(() => encodeJoinCode(info, undefined, token)).toThrow(/needs the sync server/)
    expect(() => encodeJoinCode(info, 'ws://127.0.0.1:1234', 'has spaces in it ok?')).toThrow(MemoryError)
  })

  it('refuse what is not a whole, well-formed code with invalid_request and a reason', () => {
    const good = encodeJoinCode(info)
    const forged = (body: unknown) => JOIN_CODE_PREFIX + Buffer.from(JSON.stringify(body)).toString('base64url')
    const cases: Array<[string, RegExp]> = [
      ['m1abc-xyz', /does not start with/],
      [good.slice(0, good.length - 7), /cut off or mistyped/],
      [`${JOIN_CODE_PREFIX}!!!`, /cut off or mistyped/],
      [forged({ v: 2, ...info }), /another version/],
      [forged({ v: 1, ...info, id: '../etc' }), /memory id/],
      [forged({ v: 1, ...info, name: '' }), /name/],
      [forged({ v: 1, ...info, retrieval: { ...info.retrieval, weights: { text: 0, vector: 7 } } }), /weights/],
      [forged({ v: 1, ...info, serverUrl: 'javascript:alert(1)' }), /server address/],
      [forged({ v: 1, ...info, serverUrl: 'ws://h:1', token: 'short' }), /connection token/],
      [forged({ v: 1, ...info, token: 'cairn_' + 'x'.repeat(43) }), /connection token/],
      [JOIN_CODE_PREFIX + 'A'.repeat(3_000), /too long/],
    ]
    for (const [text, reason] of cases) {
      let caught: unknown
      try {
        decodeJoinCode(text)
      } catch (err) {
        caught = err
      }
      expect(caught, text.slice(0, 40)).toBeInstanceOf(MemoryError)
      expect((caught as MemoryError).code).toBe('invalid_request')
      expect((caught as MemoryError).message).toMatch(reason)
    }
  })

  it('make a second device rank like the first: a BM25-only memory stays BM25-only even where a model is loaded', async () => {
    const embedder = await defaultEmbedder()
    const first = await createMemory({ name: 'shared', indexedDB: new IDBFactory(), IDBKeyRange, retrieval: { embedder: 'bm25-only', snippetLength: 150 }, embedder })
    const code = decodeJoinCode(encodeJoinCode(first.info))
    const second = await createMemory({ id: code.id, name: code.name, retrieval: code.retrieval, embedder, indexedDB: new IDBFactory(), IDBKeyRange })
    expect(second.info.retrieval).toEqual(first.info.retrieval)
    expect(second.info.retrieval.embedder).toBe('bm25-only')

    const hybrid = await createMemory({ name: 'hybrid', indexedDB: new IDBFactory(), IDBKeyRange, retrieval: { weights: { text: 0.7, vector: 0.3 } }, embedder })
    const hcode = decodeJoinCode(encodeJoinCode(hybrid.info))
    const joined = await createMemory({ id: hcode.id, name: hcode.name, retrieval: hcode.retrieval, embedder, indexedDB: new IDBFactory(), IDBKeyRange })
    expect(joined.info.retrieval).toEqual(hybrid.info.retrieval)
    for (const m of [first, second, hybrid, joined]) await m.close()
  })
})
