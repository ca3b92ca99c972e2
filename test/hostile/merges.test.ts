// A peer with a valid read_write token writes an alias that merges two unrelated entities
// (`alice smith -> mallory jones`). The library lets read_write accept only merges the names
// alone justify, as consolidation proposes them; the promise: the server refuses any other,
// no other device's graph changes, and a genuine variant merge still goes through.
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { ROOTS } from '../../src/sync/layout'
import { readMemoryDoc } from '../../src/sync/memory-doc'
import { putAlias, putObservation } from '../helpers/doc-writes'
import { startHarness, type Harness } from '../server/harness'
import { alias, observation, waitFor } from '../sync/fixture'
import { refusedAs, slugs } from './peer'

let h: Harness
beforeEach(async () => {
  h = await startHarness()
})
afterEach(async () => {
  await h.cleanup()
})

const person = (name: string) => ({ name, type: 'person', description: `${name}, a person`, queries: [] })
const company = (name: string) => ({ name, type: 'organization', description: `${name}, a company`, queries: [] })

/** The owner's memory names Alice Smith (also as Dr. Alice Smith), Mallory Jones, and IBM under both names. */
async function seeded() {
  const owner = h.client('mem-1', h.token('mem-1', 'full', 'owner').token)
  await owner.whenSynced()
  putObservation(owner.provider.doc, observation('people-1', { entities: [person('Alice Smith'), person('Mallory Jones')] }))
  putObservation(owner.provider.doc, observation('people-2', { entities: [person('Dr. Alice Smith')] }))
  putObservation(owner.provider.doc, observation('ibm-1', { entities: [company('IBM'), company('International Business Machines')] }))
  const attacker = h.client('mem-1', h.token('mem-1', 'read_write', 'attacker').token)
  await attacker.whenSynced()
  await waitFor('the seed on the attacker', () => slugs(attacker.provider.doc).length === 3)
  return { owner, attacker }
}

const aliasesOf = (doc: Parameters<typeof readMemoryDoc>[0]) => [...readMemoryDoc(doc).aliases.values()].map((a) => `${a.variant} -> ${a.canonical}`).sort()

describe('a read_write peer merges only what consolidation would propose', () => {
  it('an alias joining two unrelated people is refused and reaches no other device', async () => {
    const { owner, attacker } = await seeded()
    putAlias(attacker.provider.doc, alias('alice smith', 'mallory jones'))
    expect(await refusedAs(attacker, 1)).toBe('unproposed_merge')
    expect(attacker.status.refusals[0]!.keys).toEqual({ [ROOTS.aliases]: ['alice smith'] })

    // a write after it from another device: once that arrives, the alias would have too
    const witness = h.client('mem-1', h.token('mem-1', 'read', 'witness').token)
    await witness.whenSynced()
    putObservation(owner.provider.doc, observation('after-1'))
    await waitFor('the later write on the witness', () => slugs(witness.provider.doc).includes('after-1'))
    expect(aliasesOf(witness.provider.doc)).toEqual([])
    expect(aliasesOf(owner.provider.doc)).toEqual([])
  })

  it('genuine variants merge: a title, and an acronym the room\'s observations spell in capitals', async () => {
    const { owner, attacker } = await seeded()
    putAlias(attacker.provider.doc, alias('dr. alice smith', 'alice smith'))
    putAlias(attacker.provider.doc, alias('ibm', 'international business machines'))
    await waitFor('both merges on the owner', () => aliasesOf(owner.provider.doc).length === 2)
    expect(aliasesOf(owner.provider.doc)).toEqual(['dr. alice smith -> alice smith', 'ibm -> international business machines'])
    expect(attacker.status.refusals).toEqual([])
  })

  it('a full token may merge anything', async () => {
    const { owner } = await seeded()
    putAlias(owner.provider.doc, alias('alice smith', 'mallory jones'))
    const witness = h.client('mem-1', h.token('mem-1', 'read', 'witness').token)
    await witness.whenSynced()
    await waitFor('the merge on the witness', () => aliasesOf(witness.provider.doc).length === 1)
    expect(owner.status.refusals).toEqual([])
  })
})
