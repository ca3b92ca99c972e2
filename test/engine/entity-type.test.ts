// The type rule through the public API: an explicitly given type wins over the default, and a
// description given without a type never changes an entity's type, on every path a note takes.
import { describe, expect, it } from 'vitest'
import { engineOf } from '../../src/internals'
import { fixture } from './fixture'

const dana = { name: 'Dana Whitfield', type: 'person', description: 'Runs the platform team' }
const longer = { name: 'Dana Whitfield', description: 'Runs the platform team and chairs the architecture review every Thursday' }

describe('an entity keeps its explicitly given type', () => {
  it('a later, longer description without a type does not turn a person into a thing', async () => {
    const { conn } = await fixture()
    await conn.write({ title: 'Dana', content: 'Met Dana.', entities: [dana] })
    await conn.write({ title: 'Dana again', content: 'Dana chairs the review.', entities: [longer] })
    const { entity } = await conn.inspect('Dana Whitfield')
    // the longer description is shown, and it did not bring the default type along
    expect(entity.description).toBe(longer.description)
    expect(entity.type).toBe('person')
  })

  it('an entity never given a type is a thing, and takes the first type it is given', async () => {
    const { conn } = await fixture()
    await conn.write({ title: 'Atlas', content: 'Atlas.', entities: [{ name: 'Atlas', description: 'The migration' }] })
    expect((await conn.inspect('Atlas')).entity.type).toBe('thing')
    await conn.write({ title: 'Atlas kind', content: 'Atlas is a project.', entities: [{ name: 'Atlas', type: 'project', description: 'The migration' }] })
    expect((await conn.inspect('Atlas')).entity.type).toBe('project')
  })

  it('among explicit types the one most notes give wins, a tie the latest given, whatever order the notes were written in', async () => {
    const notes = [
      { title: 'one', content: 'a', observedAt: '2026-01-01', entities: [{ name: 'Acme', type: 'company', description: 'Makes anvils' }] },
      { title: 'two', content: 'b', observedAt: '2026-01-02', entities: [{ name: 'Acme', type: 'customer', description: 'Buys our sensors for its anvil line' }] },
      { title: 'three', content: 'c', observedAt: '2026-01-03', entities: [{ name: 'Acme', description: 'A long description given with no type at all, the longest by far' }] },
    ]
    for (const order of [notes, [...notes].reverse()]) {
      const { conn } = await fixture()
      for (const n of order) await conn.write(n)
      expect((await conn.inspect('Acme')).entity.type).toBe('customer')
      await conn.write({ title: 'four', content: 'd', observedAt: '2025-12-01', entities: [{ name: 'Acme', type: 'company', description: 'Makes anvils' }] })
      expect((await conn.inspect('Acme')).entity.type).toBe('company')
    }
  })

  it('deleting the note that gave the type falls back to the others, then to the default', async () => {
    const { conn } = await fixture()
    const a = await conn.write({ title: 'a', content: 'a', observedAt: '2026-01-01', entities: [{ name: 'Bo', type: 'person', description: 'A friend' }] })
    const b = await conn.write({ title: 'b', content: 'b', observedAt: '2026-01-02', entities: [{ name: 'Bo', type: 'dog', description: 'A friend who barks' }] })
    await conn.write({ title: 'c', content: 'c', observedAt: '2026-01-03', entities: [{ name: 'Bo', description: 'A good friend' }] })
    expect((await conn.inspect('Bo')).entity.type).toBe('dog')
    await conn.delete(b.slug)
    expect((await conn.inspect('Bo')).entity.type).toBe('person')
    await conn.delete(a.slug)
    expect((await conn.inspect('Bo')).entity.type).toBe('thing')
  })

  it('an update giving a description without a type keeps the type the note gave', async () => {
    const { conn } = await fixture()
    const { slug } = await conn.write({ title: 'Dana', content: 'Met Dana.', entities: [dana] })
    const res = await conn.update(slug, { entities: [longer] })
    expect(res.observation.entities[0]!.type).toBe('person')
    expect((await conn.inspect('Dana Whitfield')).entity.type).toBe('person')
  })

  it('a memory whose rows were derived under the old rule is derived again on open', async () => {
    const { memory, conn, reopen } = await fixture()
    await conn.write({ title: 'Dana', content: 'Met Dana.', entities: [dana] })
    await conn.write({ title: 'Dana again', content: 'Dana chairs the review.', entities: [longer] })
    // the rows and the saved state as the previous rules left them: the type flipped
    const db = engineOf(memory).db
    await db.meta.put({ key: 'derivationRules', value: 'cairn-derive@3' })
    await db.entities.update('dana whitfield', { type: 'thing' })
    await memory.close()
    const reopened = await reopen()
    try {
      const owner = await reopened.connect({ agent: 'owner', tier: 'full' })
      expect((await owner.inspect('Dana Whitfield')).entity.type).toBe('person')
      expect((await engineOf(reopened).db.entities.get('dana whitfield'))?.type).toBe('person')
    } finally {
      await reopened.close()
    }
  })
})
