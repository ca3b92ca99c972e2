// Single-valued relationship types: a second current target from one source makes consolidation
// propose a supersession, accepted (a note that supersedes) or rejected (remembered) like a merge.
import { describe, expect, it } from 'vitest'
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb'
import { exportMemory, importMemory, type Connection } from '../../src/index'
import { fixture } from './fixture'

const person = (name: string) => ({ name, type: 'person', description: `${name}, an engineer` })
const org = (name: string) => ({ name, type: 'organization', description: `The company ${name}` })

function edge(source: string, type: string, target: string, observedAt: string, extra: Record<string, unknown> = {}) {
  return { title: `${source} ${type} ${target}`, content: `${source} ${type} ${target}.`, observedAt, entities: [person(source), org(target)], relationships: [{ source, type, target }], ...extra }
}

async function employers(conn: Connection, request: Record<string, unknown> = {}): Promise<string[]> {
  const r = await conn.recall({ query: 'where does Dana work', ...request })
  return r.relationships.filter((e) => e.type === 'works_at' && e.source === 'Dana').map((e) => e.target).sort()
}

describe('single-valued relationship types', () => {
  it('proposes a supersession only for the same source and a declared type, the later note superseding the earlier', async () => {
    const { memory, conn } = await fixture()
    expect(await memory.setSingleValued(['Works At', 'works_at', 'lives_in'])).toEqual(['lives_in', 'works_at'])
    const a = await conn.write(edge('Dana', 'works_at', 'Acme', '2020-01-01'))
    const b = await conn.write(edge('Dana', 'works_at', 'Beta', '2023-06-01'))
    // another source, an undeclared type, and one note stating two targets: none of these
    await conn.write(edge('Eve', 'works_at', 'Acme', '2021-01-01'))
    await conn.write(edge('Dana', 'advises', 'Gamma', '2021-01-01'))
    await conn.write(edge('Dana', 'advises', 'Delta', '2022-01-01'))
    await conn.write({ title: 'Fay twice', content: 'Fay lives in two towns.', entities: [person('Fay'), org('Oslo'), org('Bergen')], relationships: [{ source: 'Fay', type: 'lives_in', target: 'Oslo' }, { source: 'Fay', type: 'lives_in', target: 'Bergen' }] })
    const proposals = (await conn.consolidate()).filter((p) => p.kind === 'supersede')
    expect(proposals).toHaveLength(1)
    expect(proposals[0]).toMatchObject({ kind: 'supersede', pair: [a.slug, b.slug], names: ['Dana works_at Acme', 'Dana works_at Beta'], supersede: { older: a.slug, newer: b.slug, type: 'works_at', targets: ['Acme', 'Beta'], from: '2023-06-01T00:00:00.000Z' } })
    expect(proposals[0]!.evidence[0]!.signal).toBe('single_valued')
  })

  it('accepting writes a note that supersedes the older one from where the newer starts; a read_write connection may', async () => {
    const { memory, conn } = await fixture()
    await memory.setSingleValued(['works_at'])
    const a = await conn.write(edge('Dana', 'works_at', 'Acme', '2020-01-01'))
    const b = await conn.write(edge('Dana', 'works_at', 'Beta', '2023-06-01'))
    expect(await employers(conn)).toEqual(['Acme', 'Beta'])
    const rw = await memory.connect({ agent: 'reviewer', tier: 'read_write' })
    const [p] = await rw.consolidate()
    const { proposal, canonical } = await rw.acceptProposal(p!.id)
    expect(proposal.status).toBe('accepted')
    const note = await conn.getObservation(canonical)
    expect(note).toMatchObject({ supersedes: [a.slug], validFrom: '2023-06-01T00:00:00.000Z', category: 'supersession' })
    expect(await employers(conn)).toEqual(['Beta'])
    expect(await employers(conn, { asOf: '2021-01-01' })).toEqual(['Acme'])
    // the older note is kept, marked
    const all = await conn.recall({ entity: 'Dana', history: 'all' })
    expect(all.observations.find((o) => o.slug === a.slug)).toMatchObject({ supersededBy: [canonical], validTo: '2023-06-01T00:00:00.000Z' })
    expect((await conn.consolidate()).filter((x) => x.kind === 'supersede')).toEqual([])
    // deleting the decision undoes it
    await conn.delete(canonical)
    expect(await employers(conn)).toEqual(['Acme', 'Beta'])
    void b
  })

  it('a rejection is remembered, across a reopen too', async () => {
    const f = await fixture()
    await f.memory.setSingleValued(['works_at'])
    await f.conn.write(edge('Dana', 'works_at', 'Acme', '2020-01-01'))
    await f.conn.write(edge('Dana', 'works_at', 'Beta', '2023-06-01'))
    const [p] = await f.conn.consolidate()
    await f.conn.rejectProposal(p!.id)
    expect(await f.conn.consolidate()).toEqual([])
    await f.memory.close()
    const again = await f.reopen()
    expect(again.singleValued()).toEqual(['works_at'])
    expect(await (await again.connect({ agent: 'x' })).consolidate()).toEqual([])
  })

  it('refuses a declaration that is not a list of relationship types', async () => {
    const { memory } = await fixture()
    await expect(memory.setSingleValued('works_at' as never)).rejects.toMatchObject({ code: 'invalid_request' })
    await expect(memory.setSingleValued(['!!!'])).rejects.toMatchObject({ code: 'invalid_request' })
    expect(memory.singleValued()).toEqual([])
  })

  it('a backup carries the declaration', async () => {
    const { memory } = await fixture()
    await memory.setSingleValued(['works_at'])
    const backup = JSON.parse(JSON.stringify(await exportMemory(memory)))
    expect(backup.singleValued).toEqual(['works_at'])
    const restored = await importMemory(backup, { indexedDB: new IDBFactory(), IDBKeyRange })
    expect(restored.singleValued()).toEqual(['works_at'])
    await expect(importMemory({ ...backup, singleValued: ['!!!'] }, { indexedDB: new IDBFactory(), IDBKeyRange })).rejects.toMatchObject({ code: 'invalid_request' })
  })
})
