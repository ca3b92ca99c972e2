import { describe, expect, it } from 'vitest'
import { MemoryError } from '../../src/index'
import { ada, engine, fixture, society } from './fixture'
import { engineOf } from '../../src/internals'

async function rejects(p: Promise<unknown>, code: string): Promise<MemoryError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  )
  expect(err).toBeInstanceOf(MemoryError)
  expect((err as MemoryError).code).toBe(code)
  return err as MemoryError
}

describe('write contract', () => {
  it('rejects the whole write when any entity lacks a description, naming each', async () => {
    const { conn, memory } = await fixture()
    const err = await rejects(
      conn.write({ title: 'Ada', content: 'Ada worked on the engine.', entities: [ada, { name: 'Babbage', description: '  ' }, { name: 'Engine', description: '' }] }),
      'invalid_write',
    )
    expect(err.details.entitiesWithoutDescription).toEqual(['Babbage', 'Engine'])
    expect(err.message).toContain('Babbage')
    // nothing half-written: not even Ada, who was valid
    await rejects(conn.inspect('Ada Lovelace'), 'not_found')
    expect(engineOf(memory).committedGraph.observationCount).toBe(0)
  })

  it('resolves the same name in two observations to one entity', async () => {
    const { conn } = await fixture()
    await conn.write({ title: 'one', content: 'first', entities: [ada] })
    await conn.write({ title: 'two', content: 'second', entities: [{ ...ada, name: '  ada   LOVELACE. ' }] })
    const detail = await conn.inspect('ADA LOVELACE')
    expect(detail.entity.key).toBe('ada lovelace')
    expect(detail.entity.observations).toHaveLength(2)
  })

  it('rejects a relationship to an entity that is neither in the write nor existing', async () => {
    const { conn } = await fixture()
    const err = await rejects(
      conn.write({ title: 't', content: 'c', entities: [ada], relationships: [{ source: 'Ada Lovelace', type: 'worked on', target: 'Difference Engine' }] }),
      'invalid_write',
    )
    expect(err.message).toContain('Difference Engine')
  })

  it('accepts a relationship to an entity another observation made', async () => {
    const { conn } = await fixture()
    await conn.write({ title: 'engine', content: 'about the engine', entities: [engine] })
    const res = await conn.write({ title: 'ada', content: 'Ada wrote notes', entities: [ada], relationships: [{ source: 'Ada Lovelace', type: 'wrote notes on', target: 'analytical engine' }] })
    const hood = res.neighborhoods.find((n) => n.key === 'ada lovelace')!
    expect(hood.relationships).toEqual([{ source: 'Ada Lovelace', type: 'wrote_notes_on', target: 'Analytical Engine', description: '', weight: 1 }])
    expect(hood.neighbors).toEqual(['Analytical Engine'])
    expect(res.neighborhoods.find((n) => n.key === 'analytical engine')!.degree).toBe(1)
  })

  it('warns on long content and rejects content over the hard limit', async () => {
    const { conn } = await fixture()
    const res = await conn.write({ title: 'long', content: 'x'.repeat(2_500), entities: [ada] })
    expect(res.warnings.map((w) => w.code)).toEqual(['long_content'])
    expect(res.warnings[0]!.message).toMatch(/split/i)
    await rejects(conn.write({ title: 'huge', content: 'x'.repeat(20_001), entities: [ada] }), 'too_large')
  })

  it('rejects bad dates, confidence, unknown fields and prototype keys without storing anything', async () => {
    const { conn, memory } = await fixture()
    await rejects(conn.write({ title: 't', content: 'c', observedAt: '2026-02-30T99:00' }), 'invalid_write')
    await rejects(conn.write({ title: 't', content: 'c', confidence: 2 }), 'invalid_write')
    await rejects(conn.write({ title: 't', content: 'c', entites: [] } as never), 'invalid_write')
    await rejects(conn.write(JSON.parse('{"title":"t","content":"c","__proto__":{"polluted":true}}')), 'invalid_write')
    await rejects(conn.write(JSON.parse('{"title":"t","content":"c","entities":[{"name":"x","description":"d","__proto__":{"a":1}}]}')), 'invalid_write')
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
    expect(engineOf(memory).committedGraph.observationCount).toBe(0)
  })

  it('returns possible duplicates for a new name that looks like an existing one', async () => {
    const { conn } = await fixture()
    await conn.write({ title: 'acme', content: 'c', entities: [{ name: 'ACME Corp.', type: 'organization', description: 'Maker of anvils' }] })
    const res = await conn.write({ title: 'acme2', content: 'c', entities: [{ name: 'Acme Corporation', type: 'organization', description: 'Anvil maker' }] })
    expect(res.possibleDuplicates.map((d) => d.existing)).toContain('ACME Corp.')
  })

  it('makes slugs from the title, unique per memory', async () => {
    const { conn } = await fixture()
    const a = await conn.write({ title: 'Meeting with Ada!', content: 'c' })
    const b = await conn.write({ title: 'Meeting with Ada!', content: 'c' })
    expect(a.slug).toMatch(/^meeting-with-ada-[a-z0-9]{6}$/)
    expect(b.slug).not.toBe(a.slug)
  })
})

describe('atomic writes', () => {
  it('a write that fails in storage leaves nothing behind, in IndexedDB or in memory', async () => {
    const { conn, memory, reopen } = await fixture()
    await conn.write({ title: 'kept', content: 'c', entities: [ada] })
    const db = engineOf(memory).db
    const original = db.relationships.bulkPut.bind(db.relationships)
    // fail after the observation and entities were already put inside the transaction
    db.relationships.bulkPut = (() => Promise.reject(Object.assign(new Error('disk full'), { name: 'QuotaExceededError' }))) as never
    const err = await conn.write({ title: 'lost', content: 'c', entities: [ada, engine], relationships: [{ source: ada.name, type: 'worked_on', target: engine.name }] }).catch((e: unknown) => e)
    db.relationships.bulkPut = original
    expect(err).toBeInstanceOf(MemoryError)
    expect((err as MemoryError).code).toBe('storage_failed')
    expect((err as MemoryError).details.reason).toBe('quota')
    expect(await db.observations.count()).toBe(1)
    expect(await db.entities.count()).toBe(1)
    expect(engineOf(memory).committedGraph.observationCount).toBe(1)
    await expect(conn.inspect('Analytical Engine')).rejects.toMatchObject({ code: 'not_found' })
    const again = await reopen()
    expect(engineOf(again).committedGraph.entities.size).toBe(1)
    // and the memory keeps working
    await conn.write({ title: 'after', content: 'c', entities: [engine] })
    expect((await conn.inspect('Analytical Engine')).entity.observations).toHaveLength(1)
  })
})

describe('concurrency', () => {
  it('queues concurrent writes so none interleave, and reads do not wait', async () => {
    const { conn, memory } = await fixture()
    await conn.write({ title: 'seed', content: 'seed', entities: [society] })
    const writes = Array.from({ length: 20 }, (_, i) =>
      conn.write({ title: `w${i}`, content: `note ${i}`, entities: [{ name: `Fellow ${i}`, type: 'person', description: `Fellow number ${i}` }], relationships: [{ source: `Fellow ${i}`, type: 'member_of', target: 'Royal Society' }] }),
    )
    // a read issued while the queue is busy answers from the committed state
    const read = conn.recall({ entity: 'Royal Society' })
    const results = await Promise.all(writes)
    const during = await read
    expect(during.observations.length).toBeLessThanOrEqual(21)
    expect(new Set(results.map((r) => r.slug)).size).toBe(20)
    const society2 = await conn.inspect('Royal Society')
    expect(society2.entity.degree).toBe(20)
    expect(engineOf(memory).committedGraph.observationCount).toBe(21)
  })
})
