import { afterEach, describe, expect, it } from 'vitest'
import { LIMITS } from '../../src/core/limits'
import { dispatchTool, type ToolOutcome } from '../../src/tools/dispatch'
import { ada, engine, fixture, society, type Fixture } from '../engine/fixture'

let fx: Fixture | undefined
afterEach(async () => {
  await fx?.memory.close()
  fx = undefined
})

const note = {
  title: 'Ada and the Engine',
  content: 'Ada Lovelace wrote notes on the Analytical Engine and read them to the Royal Society.',
  entities: [ada, engine, society],
  relationships: [
    { source: 'Ada Lovelace', type: 'works_on', target: 'Analytical Engine' },
    { source: 'Ada Lovelace', type: 'member_of', target: 'Royal Society' },
  ],
}

function error(o: ToolOutcome) {
  if (o.ok) throw new Error(`expected an error, got ${JSON.stringify(o.result)}`)
  return o.error
}
function result<T>(o: ToolOutcome): T {
  if (!o.ok) throw new Error(`expected a result, got ${JSON.stringify(o.error)}`)
  return o.result as T
}

async function count(f: Fixture): Promise<number> {
  const r = result<{ observations: unknown[] }>(await dispatchTool(f.conn, 'recall', { category: 'note' }))
  return r.observations.length
}

describe('dispatchTool', () => {
  it('writes, reads back and recalls through the connection', async () => {
    fx = await fixture()
    const { slug } = result<{ slug: string }>(await dispatchTool(fx.conn, 'write', note))
    const obs = result<{ slug: string; createdBy: string }>(await dispatchTool(fx.conn, 'get_observation', { slug }))
    expect(obs).toMatchObject({ slug, createdBy: fx.conn.id })
    const detail = result<{ outgoing: Array<{ target: string }> }>(await dispatchTool(fx.conn, 'inspect_entity', { name: 'ada lovelace' }))
    expect(detail.outgoing.map((r) => r.target).sort()).toEqual(['Analytical Engine', 'Royal Society'])
  })

  it('names missing fields and wrong types with their paths, and writes nothing', async () => {
    fx = await fixture()
    const missing = error(await dispatchTool(fx.conn, 'write', { title: 'x', entities: [{ name: 'Ada', type: 'person' }] }))
    expect(missing.code).toBe('invalid_request')
    const paths = (missing.details.issues as Array<{ path: string }>).map((i) => i.path)
    expect(paths).toContain('content')
    // whether an entity is new is the memory's to say: its missing description comes back with the other problems of the write
    const undescribed = error(await dispatchTool(fx.conn, 'write', { title: 'x', content: 'y', observedAt: 'not a date', entities: [{ name: 'Ada', type: 'person' }] }))
    expect(undescribed.code).toBe('invalid_write')
    expect((undescribed.details.issues as Array<{ path: string }>).map((i) => i.path).sort()).toEqual(['entities[0].description', 'observedAt'])
    expect(undescribed.details.entitiesWithoutDescription).toEqual(['Ada'])
    const wrong = error(await dispatchTool(fx.conn, 'write', { ...note, tags: 'not-a-list', confidence: '1' }))
    expect(wrong.code).toBe('invalid_request')
    expect((wrong.details.issues as Array<{ path: string }>).map((i) => i.path).sort()).toEqual(['confidence', 'tags'])
    const extra = error(await dispatchTool(fx.conn, 'recall', { query: 'ada', color: 'blue' }))
    expect(extra.message).toContain('color')
    expect(await count(fx)).toBe(0)
  })

  it('rejects oversized content as too_large', async () => {
    fx = await fixture()
    const e = error(await dispatchTool(fx.conn, 'write', { ...note, content: 'x'.repeat(LIMITS.contentHardChars + 1) }))
    expect(e.code).toBe('too_large')
    expect(e.message).toMatch(/split/)
    expect(await count(fx)).toBe(0)
  })

  it('passes engine errors through: unknown slug is not_found and nothing changes', async () => {
    fx = await fixture()
    const { slug } = result<{ slug: string }>(await dispatchTool(fx.conn, 'write', note))
    for (const [name, args] of [['get_observation', { slug: 'no-such-slug' }], ['update', { slug: 'no-such-slug', title: 'x' }], ['delete', { slug: 'no-such-slug' }]] as const) {
      const e = error(await dispatchTool(fx.conn, name, args))
      expect(e.code, name).toBe('not_found')
    }
    // A relationship to an entity nobody described is the core's rejection, not the schema's.
    const dangling = error(await dispatchTool(fx.conn, 'write', { title: 't', content: 'c', entities: [ada], relationships: [{ source: 'Ada Lovelace', type: 'knows', target: 'Nobody' }] }))
    expect(dangling.code).toBe('invalid_write')
    expect(await count(fx)).toBe(1)
    expect(result<{ title: string }>(await dispatchTool(fx.conn, 'get_observation', { slug })).title).toBe(note.title)
  })

  it('answers an unknown tool with invalid_request listing the tools', async () => {
    fx = await fixture()
    const e = error(await dispatchTool(fx.conn, 'drop_database', {}))
    expect(e.code).toBe('invalid_request')
    expect(e.message).toContain('recall')
    expect(error(await dispatchTool(fx.conn, 42, {})).code).toBe('invalid_request')
  })

  it('holds the tiers: read cannot write, read_write cannot delete or update', async () => {
    fx = await fixture()
    const { slug } = result<{ slug: string }>(await dispatchTool(fx.conn, 'write', note))
    const reader = await fx.memory.connect({ agent: 'reader', tier: 'read' })
    const writer = await fx.memory.connect({ agent: 'writer', tier: 'read_write' })
    expect(error(await dispatchTool(reader, 'write', note)).code).toBe('forbidden')
    expect(error(await dispatchTool(reader, 'store_file', { path: 'a.txt', data: 'hi' })).code).toBe('forbidden')
    expect(result<{ entities: unknown[] }>(await dispatchTool(reader, 'recall', { query: 'Ada Lovelace' })).entities.length).toBeGreaterThan(0)
    expect(error(await dispatchTool(writer, 'delete', { slug })).code).toBe('forbidden')
    expect(error(await dispatchTool(writer, 'update', { slug, title: 'changed' })).code).toBe('forbidden')
    expect(result<{ slug: string }>(await dispatchTool(writer, 'write', { ...note, title: 'second' })).slug).toBeTruthy()
    expect(await count(fx)).toBe(2)
    expect(result<{ title: string }>(await dispatchTool(fx.conn, 'get_observation', { slug })).title).toBe(note.title)
  })

  it('stores and reads appendix files as utf8 or base64', async () => {
    fx = await fixture()
    const stored = result<{ path: string; size: number }>(await dispatchTool(fx.conn, 'store_file', { path: 'docs/notes.md', data: '# Notes\nété', type: 'text/markdown', description: 'notes' }))
    expect(stored.size).toBe(new TextEncoder().encode('# Notes\nété').length)
    expect(result<{ data: string; encoding: string }>(await dispatchTool(fx.conn, 'read_file', { path: 'docs/notes.md' }))).toMatchObject({ encoding: 'utf8', data: '# Notes\nété' })
    const bytes = Buffer.from([0, 255, 1, 254]).toString('base64')
    result(await dispatchTool(fx.conn, 'store_file', { path: 'bin/x', data: bytes, encoding: 'base64' }))
    expect(result<{ data: string; encoding: string }>(await dispatchTool(fx.conn, 'read_file', { path: 'bin/x' }))).toMatchObject({ encoding: 'base64', data: bytes })
    expect(error(await dispatchTool(fx.conn, 'store_file', { path: 'bin/y', data: '***', encoding: 'base64' })).code).toBe('invalid_request')
    expect(result<unknown[]>(await dispatchTool(fx.conn, 'list_files', {})).length).toBe(2)
    const big = Uint8Array.from({ length: 100_000 }, (_, i) => (i * 7919) % 256)
    result(await dispatchTool(fx.conn, 'store_file', { path: 'bin/big', data: Buffer.from(big).toString('base64'), encoding: 'base64' }))
    const back = result<{ data: string }>(await dispatchTool(fx.conn, 'read_file', { path: 'bin/big' }))
    expect(Buffer.from(back.data, 'base64').equals(Buffer.from(big))).toBe(true)
  })

  it('never throws, whatever the arguments', async () => {
    fx = await fixture()
    for (const args of [null, undefined, [], 'text', 42, { slug: 7 }, { title: { nested: true } }]) {
      for (const name of ['write', 'update', 'recall', 'get_observation', 'accept_proposal']) {
        const o = await dispatchTool(fx.conn, name, args)
        if (!o.ok) expect(o.error.code, `${name} ${JSON.stringify(args)}`).toMatch(/^(invalid_request|invalid_write|not_found)$/)
      }
    }
    expect(await count(fx)).toBe(0)
  })
})
