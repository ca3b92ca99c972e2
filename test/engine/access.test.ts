import { describe, expect, it } from 'vitest'
import { OPERATION_TIER, type Tier } from '../../src/index'
import { ada, fixture } from './fixture'

const TIERS: Tier[] = ['read', 'read_write', 'full']
const RANK = { read: 0, read_write: 1, full: 2 }

describe('access tiers', () => {
  it('new connections default to read_write', async () => {
    const { memory } = await fixture()
    const c = await memory.connect({ agent: 'x' })
    expect(c.tier).toBe('read_write')
    expect(c.token).toMatch(/^[A-Za-z0-9_-]{40,}$/)
  })

  for (const tier of TIERS) {
    it(`a ${tier} connection can do exactly what its tier grants`, async () => {
      const { memory, conn: owner } = await fixture()
      const { slug } = await owner.write({ title: 'seed', content: 'c', entities: [ada] })
      await owner.storeFile({ path: 'seed.txt', data: 'hello' })
      const conn = await memory.connect({ agent: `agent-${tier}`, tier })
      let n = 0
      const calls: Record<keyof typeof OPERATION_TIER, () => Promise<unknown>> = {
        recall: () => conn.recall({ query: 'ada' }),
        inspect: () => conn.inspect('Ada Lovelace'),
        getObservation: () => conn.getObservation(slug),
        listFiles: () => conn.listFiles(),
        readFile: () => conn.readFile('seed.txt'),
        listProposals: () => conn.listProposals(),
        listSingleValued: () => conn.listSingleValued(),
        write: () => conn.write({ title: `w${n++}`, content: 'c' }),
        storeFile: () => conn.storeFile({ path: `f${n++}.txt`, data: 'x' }),
        consolidate: () => conn.consolidate(),
        acceptProposal: () => conn.acceptProposal('merge:none'),
        rejectProposal: () => conn.rejectProposal('merge:none'),
        update: () => conn.update(slug, { content: 'changed' }),
        delete: () => conn.delete(slug),
        setSingleValued: () => conn.setSingleValued(['works_at']),
      }
      for (const [op, needed] of Object.entries(OPERATION_TIER) as Array<[keyof typeof OPERATION_TIER, Tier]>) {
        const outcome = await calls[op]().then(() => 'ok', (e: { code: string }) => e.code)
        if (RANK[tier] >= RANK[needed]) expect([op, outcome]).not.toEqual([op, 'forbidden'])
        else expect([op, outcome]).toEqual([op, 'forbidden'])
      }
    })
  }

  it('a forbidden error names the tier needed', async () => {
    const { memory } = await fixture()
    const reader = await memory.connect({ agent: 'reader', tier: 'read' })
    await expect(reader.write({ title: 't', content: 'c' })).rejects.toMatchObject({ code: 'forbidden', details: { needed: 'read_write', held: 'read' } })
  })

  it('revocation takes effect at once on handles in use, and tokens reattach', async () => {
    const { memory } = await fixture()
    const c = await memory.connect({ agent: 'a', tier: 'full' })
    const again = await memory.connectWithToken(c.token!)
    expect(again.tier).toBe('full')
    await memory.revoke(c.id)
    await expect(again.recall({})).rejects.toMatchObject({ code: 'revoked' })
    await expect(memory.connectWithToken(c.token!)).rejects.toMatchObject({ code: 'forbidden' })
    expect(memory.listConnections().find((x) => x.id === c.id)!.revokedAt).not.toBeNull()
    expect(JSON.stringify(memory.listConnections())).not.toContain(c.token!)
  })
})
