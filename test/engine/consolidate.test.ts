import { describe, expect, it } from 'vitest'
import { fixture } from './fixture'

describe('consolidation through the engine', () => {
  it('proposes variant names, and accepting reassigns edges, drops self-loops, recomputes degrees', async () => {
    const { conn, reopen } = await fixture()
    await conn.write({ title: 'ibm', content: 'c', entities: [{ name: 'International Business Machines', type: 'organization', description: 'American computer company' }, { name: 'Watson', type: 'product', description: 'question answering system' }], relationships: [{ source: 'Watson', type: 'made by', target: 'International Business Machines' }] })
    await conn.write({ title: 'ibm2', content: 'c', entities: [{ name: 'IBM', type: 'organization', description: 'computer company from Armonk' }, { name: 'Deep Blue', type: 'product', description: 'chess computer' }], relationships: [{ source: 'Deep Blue', type: 'made by', target: 'IBM' }, { source: 'IBM', type: 'owns', target: 'International Business Machines' }] })
    const proposals = await conn.consolidate()
    const p = proposals.find((x) => x.pair.includes('ibm') && x.pair.includes('international business machines'))!
    expect(p).toBeDefined()
    expect(p.evidence.map((e) => e.signal)).toContain('acronym')
    // nothing applied automatically
    expect((await conn.inspect('IBM')).entity.key).toBe('ibm')

    const { canonical } = await conn.acceptProposal(p.id, { canonical: 'International Business Machines' })
    expect(canonical).toBe('International Business Machines')
    const merged = await conn.inspect('IBM')
    expect(merged.entity.key).toBe('international business machines')
    expect(merged.aliases).toEqual(['ibm'])
    // the IBM owns IBM self-loop is gone; Watson and Deep Blue both point at the canonical entity
    expect(merged.incoming.map((r) => r.source).sort()).toEqual(['Deep Blue', 'Watson'])
    expect(merged.outgoing).toEqual([])
    expect(merged.entity.degree).toBe(2)

    // a later write naming the variant lands on the canonical entity
    await conn.write({ title: 'later', content: 'c', entities: [{ name: 'I.B.M', type: 'organization', description: 'x' }, { name: 'Summit', type: 'product', description: 'supercomputer' }], relationships: [{ source: 'Summit', type: 'made by', target: 'IBM' }] })
    expect((await conn.inspect('International Business Machines')).entity.degree).toBe(3)

    // accepted and rejected decisions persist
    const again = await reopen()
    const c2 = await again.connect({ agent: 'b', tier: 'full' })
    expect((await c2.inspect('ibm')).entity.key).toBe('international business machines')
    expect((await c2.listProposals()).find((x) => x.id === p.id)!.status).toBe('accepted')
  })

  it('read_write accepts a merge the names alone justify; one that rests on descriptions needs full', async () => {
    const { memory, conn: full } = await fixture()
    const writer = await memory.connect({ agent: 'writer', tier: 'read_write' })
    const surgeon = 'surgeon at the city hospital who leads the transplant unit'
    await writer.write({ title: 'a', content: 'c', entities: [{ name: 'Dr. Smith', type: 'person', description: surgeon }, { name: 'Kubernetes Operator', type: 'tool', description: 'deploys the cluster' }] })
    await writer.write({ title: 'b', content: 'c', entities: [{ name: 'Smith', type: 'person', description: surgeon }, { name: 'Kubernetis Operator', type: 'tool', description: 'runs the cluster' }] })
    const proposals = await writer.consolidate()
    const byName = proposals.find((p) => p.pair.includes('kubernetes operator'))!
    const byDescription = proposals.find((p) => p.pair.includes('smith'))!
    expect(byName.evidence.map((e) => e.signal)).toEqual(['edit_distance'])
    // a lone surname behind a title is weak; the identical description lifts it over the threshold
    expect(byDescription.evidence.map((e) => e.signal).sort()).toEqual(['similar_description', 'title_or_suffix'])

    await writer.acceptProposal(byName.id)
    expect((await writer.inspect('Kubernetis Operator')).entity.key).toBe('kubernetes operator')
    await expect(writer.acceptProposal(byDescription.id)).rejects.toMatchObject({ code: 'forbidden', details: { needed: 'full', held: 'read_write' } })
    expect((await writer.inspect('Smith')).entity.key).toBe('smith')
    await full.acceptProposal(byDescription.id)
    expect((await writer.inspect('Dr. Smith')).aliases.length).toBe(1)
  })

  it('a rejected pair is not proposed again', async () => {
    const { conn } = await fixture()
    await conn.write({ title: 'a', content: 'c', entities: [{ name: 'Dr. Jane Doe', type: 'person', description: 'surgeon at the city hospital' }] })
    await conn.write({ title: 'b', content: 'c', entities: [{ name: 'Jane Doe', type: 'person', description: 'surgeon at city hospital' }] })
    const [first] = await conn.consolidate()
    expect(first!.names.slice().sort()).toEqual(['Dr. Jane Doe', 'Jane Doe'])
    await conn.rejectProposal(first!.id)
    expect((await conn.consolidate()).map((p) => p.id)).not.toContain(first!.id)
    await expect(conn.acceptProposal(first!.id)).rejects.toMatchObject({ code: 'conflict' })
  })
})
