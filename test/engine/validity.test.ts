// Facts that change, on one device through the public API: each interval rule of docs/time.md.
import { describe, expect, it } from 'vitest'
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb'
import { exportMemory, importMemory, type Connection } from '../../src/index'
import { fixture } from './fixture'

const dana = { name: 'Dana Reyes', type: 'person', description: 'Engineer on the payments team' }
const acme = { name: 'Acme Corp', type: 'organization', description: 'Maker of anvils and rockets' }
const beta = { name: 'Beta Labs', type: 'organization', description: 'Research lab for batteries' }

/** A note that Dana works at `org`, with the given world time. */
function job(org: typeof acme, extra: Record<string, unknown> = {}) {
  return { title: `Dana works at ${org.name}`, content: `Dana Reyes works at ${org.name}.`, entities: [dana, org], relationships: [{ source: dana.name, type: 'works_at', target: org.name }], ...extra }
}

async function slugsOf(conn: Connection, request: Record<string, unknown>): Promise<string[]> {
  const r = await conn.recall({ entity: 'Dana Reyes', ...request })
  return r.observations.map((o) => o.slug).sort()
}

async function employers(conn: Connection, request: Record<string, unknown> = {}): Promise<string[]> {
  const r = await conn.recall({ query: 'where does Dana work', ...request })
  return r.relationships.filter((e) => e.type === 'works_at').map((e) => e.target).sort()
}

describe('validity in time: write and check', () => {
  it('stores validFrom, validTo and supersedes as given, and nothing when none is given', async () => {
    const { conn } = await fixture()
    const a = await conn.write(job(acme, { validFrom: '2020-01-01', validTo: '2023-06-01' }))
    const b = await conn.write(job(beta, { validFrom: '2023-06-01', supersedes: [a.slug], relationships: [{ source: dana.name, type: 'works_at', target: beta.name, validFrom: '2023-07-01' }] }))
    const plain = await conn.write({ title: 'Plain', content: 'No dates.', entities: [dana] })
    expect(await conn.getObservation(a.slug)).toMatchObject({ validFrom: '2020-01-01T00:00:00.000Z', validTo: '2023-06-01T00:00:00.000Z' })
    expect((await conn.getObservation(b.slug)).supersedes).toEqual([a.slug])
    expect((await conn.getObservation(b.slug)).relationships[0]!.validFrom).toBe('2023-07-01T00:00:00.000Z')
    const stored = await conn.getObservation(plain.slug)
    expect(Object.keys(stored)).not.toContain('validFrom')
    expect(Object.keys(stored)).not.toContain('supersedes')
  })

  it('refuses an interval whose end is not after its start, a bad date, or a note it cannot name, storing nothing', async () => {
    const { conn } = await fixture()
    await expect(conn.write(job(acme, { validFrom: '2023-01-01', validTo: '2023-01-01' }))).rejects.toMatchObject({ code: 'invalid_write' })
    await expect(conn.write(job(acme, { validFrom: 'last spring' }))).rejects.toMatchObject({ code: 'invalid_write' })
    await expect(conn.write(job(acme, { relationships: [{ source: dana.name, type: 'works_at', target: acme.name, validFrom: '2024-01-01', validTo: '2020-01-01' }] }))).rejects.toMatchObject({ code: 'invalid_write' })
    await expect(conn.write(job(acme, { supersedes: ['no-such-note'] }))).rejects.toMatchObject({ code: 'invalid_write' })
    expect((await conn.recall({})).observations).toHaveLength(0)
  })

  it('lets an update set, move and clear the fields, and refuses an update that leaves the end before the start', async () => {
    const { conn } = await fixture()
    const a = await conn.write(job(acme, { validFrom: '2020-01-01' }))
    const b = await conn.write(job(beta))
    await expect(conn.update(a.slug, { validTo: '2019-01-01' })).rejects.toMatchObject({ code: 'invalid_write' })
    await expect(conn.update(b.slug, { supersedes: [b.slug] })).rejects.toMatchObject({ code: 'invalid_write' })
    expect((await conn.update(a.slug, { validTo: '2022-01-01' })).observation.validTo).toBe('2022-01-01T00:00:00.000Z')
    const cleared = (await conn.update(a.slug, { validFrom: null, validTo: null })).observation
    expect('validFrom' in cleared || 'validTo' in cleared).toBe(false)
    expect((await conn.update(b.slug, { supersedes: [a.slug] })).observation.supersedes).toEqual([a.slug])
    expect('supersedes' in (await conn.update(b.slug, { supersedes: [] })).observation).toBe(false)
  })

  it('lets a read_write connection supersede another connection\'s note: it adds a note and leaves the old one as it was', async () => {
    const { memory, conn } = await fixture()
    const a = await conn.write(job(acme, { observedAt: '2020-01-01' }))
    const before = await conn.getObservation(a.slug)
    const other = await memory.connect({ agent: 'another agent', tier: 'read_write' })
    await other.write(job(beta, { observedAt: '2023-01-01', supersedes: [a.slug] }))
    expect(await conn.getObservation(a.slug)).toEqual(before)
  })
})

describe('validity in time: the interval rules', () => {
  it('a supersession closes the older note where the newer starts: current recall leaves it out and counts it', async () => {
    const { conn } = await fixture()
    const a = await conn.write(job(acme, { observedAt: '2020-01-01' }))
    const b = await conn.write(job(beta, { observedAt: '2023-06-01', supersedes: [a.slug] }))
    expect(await slugsOf(conn, {})).toEqual([b.slug])
    expect((await conn.recall({ entity: 'Dana Reyes' })).superseded).toBe(1)
    expect(await employers(conn)).toEqual(['Beta Labs'])
    // half-open: the day B starts, A no longer holds; the instant before, it does
    expect(await slugsOf(conn, { asOf: '2023-06-01' })).toEqual([b.slug])
    expect(await slugsOf(conn, { asOf: '2023-05-31T23:59:59.999Z' })).toEqual([a.slug])
    expect(await employers(conn, { asOf: '2021-01-01' })).toEqual(['Acme Corp'])
    const all = await conn.recall({ entity: 'Dana Reyes', history: 'all' })
    const old = all.observations.find((o) => o.slug === a.slug)!
    expect(old).toMatchObject({ validFrom: '2020-01-01T00:00:00.000Z', validTo: '2023-06-01T00:00:00.000Z', supersededBy: [b.slug], current: false })
    expect(all.observations.find((o) => o.slug === b.slug)!.current).toBeUndefined()
    expect((await employers(conn, { history: 'all' }))).toEqual(['Acme Corp', 'Beta Labs'])
  })

  it('a "newer" note older than the one it names is closed instead (out-of-order arrival)', async () => {
    const { conn } = await fixture()
    const a = await conn.write(job(acme, { validFrom: '2023-01-01' }))
    const b = await conn.write(job(beta, { validFrom: '2020-01-01', supersedes: [a.slug] }))
    expect(await slugsOf(conn, {})).toEqual([a.slug])
    expect(await slugsOf(conn, { asOf: '2021-01-01' })).toEqual([b.slug])
    const all = await conn.recall({ entity: 'Dana Reyes', history: 'all' })
    expect(all.observations.find((o) => o.slug === b.slug)).toMatchObject({ validTo: '2023-01-01T00:00:00.000Z', current: false })
    expect(all.observations.find((o) => o.slug === b.slug)!.supersededBy).toBeUndefined()
    expect(all.observations.find((o) => o.slug === a.slug)!.supersededBy).toBeUndefined()
  })

  it('a note superseding one that starts at the same moment retires it whole, and stays current itself', async () => {
    const { conn } = await fixture()
    const a = await conn.write(job(acme, { validFrom: '2022-01-01' }))
    const b = await conn.write(job(beta, { validFrom: '2022-01-01', supersedes: [a.slug] }))
    expect(await slugsOf(conn, {})).toEqual([b.slug])
    expect(await slugsOf(conn, { asOf: '2022-01-01' })).toEqual([b.slug])
    const all = await conn.recall({ entity: 'Dana Reyes', history: 'all' })
    expect(all.observations.find((o) => o.slug === b.slug)!.validTo).toBeUndefined()
  })

  it('notes whose intervals do not overlap never retire each other', async () => {
    const { conn } = await fixture()
    const a = await conn.write(job(acme, { validFrom: '2018-01-01', validTo: '2019-01-01' }))
    const b = await conn.write(job(beta, { validFrom: '2021-01-01', supersedes: [a.slug] }))
    const all = await conn.recall({ entity: 'Dana Reyes', history: 'all' })
    expect(all.observations.find((o) => o.slug === a.slug)).toMatchObject({ validTo: '2019-01-01T00:00:00.000Z' })
    expect(all.observations.find((o) => o.slug === a.slug)!.supersededBy).toBeUndefined()
    expect(await slugsOf(conn, { asOf: '2018-06-01' })).toEqual([a.slug])
    // a gap: neither held in 2020
    expect(await slugsOf(conn, { asOf: '2020-06-01' })).toEqual([])
    expect(await slugsOf(conn, {})).toEqual([b.slug])
  })

  it('deleting the successor makes its predecessor current again', async () => {
    const { conn } = await fixture()
    const a = await conn.write(job(acme, { observedAt: '2020-01-01' }))
    const b = await conn.write(job(beta, { observedAt: '2023-01-01', supersedes: [a.slug] }))
    expect(await slugsOf(conn, {})).toEqual([b.slug])
    await conn.delete(b.slug)
    expect(await slugsOf(conn, {})).toEqual([a.slug])
    const r = await conn.recall({ entity: 'Dana Reyes', history: 'all' })
    expect(r.observations[0]!.supersededBy).toBeUndefined()
    expect(r.superseded).toBeUndefined()
  })

  it('a note past its own validTo is left out now and shown as of a date inside it; one not begun yet is kept now', async () => {
    const { conn } = await fixture()
    const past = await conn.write(job(acme, { validFrom: '2010-01-01', validTo: '2011-01-01' }))
    const planned = await conn.write(job(beta, { validFrom: '2999-01-01' }))
    expect(await slugsOf(conn, {})).toEqual([planned.slug])
    expect(await slugsOf(conn, { asOf: '2010-06-01' })).toEqual([past.slug])
  })

  it('a relationship\'s own dates bound the edge within its note', async () => {
    const { conn } = await fixture()
    await conn.write({ ...job(acme, { observedAt: '2020-01-01' }), relationships: [{ source: dana.name, type: 'works_at', target: acme.name, validTo: '2022-01-01' }] })
    expect(await employers(conn, { asOf: '2021-01-01' })).toEqual(['Acme Corp'])
    expect(await employers(conn, { asOf: '2022-06-01' })).toEqual([])
    expect(await employers(conn)).toEqual([])
    // the note itself still holds: only its edge ended
    expect((await conn.recall({ entity: 'Dana Reyes' })).observations).toHaveLength(1)
  })

  it('structural recall and asOf leave out notes noted after the date', async () => {
    const { conn } = await fixture()
    const early = await conn.write({ title: 'early', content: 'Dana joined.', entities: [dana], observedAt: '2020-01-01' })
    await conn.write({ title: 'late', content: 'Dana moved.', entities: [dana], observedAt: '2024-01-01' })
    expect(await slugsOf(conn, { asOf: '2021-01-01' })).toEqual([early.slug])
  })

  it('inspect shows the entity\'s history in world-time order', async () => {
    const { conn } = await fixture()
    const b = await conn.write(job(beta, { validFrom: '2023-01-01' }))
    const a = await conn.write(job(acme, { validFrom: '2019-01-01' }))
    const c = await conn.write({ title: 'Dana moves to Acme again', content: 'Back at Acme.', entities: [dana], validFrom: '2025-01-01', supersedes: [b.slug] })
    const { history } = await conn.inspect('Dana Reyes')
    expect(history.map((h) => h.slug)).toEqual([a.slug, b.slug, c.slug])
    expect(history[1]).toMatchObject({ validTo: '2025-01-01T00:00:00.000Z', supersededBy: [c.slug], current: false })
    expect(history[2]!.current).toBe(true)
  })

  it('inspect lists every edge and marks the ones that no longer hold now', async () => {
    const { conn } = await fixture()
    const a = await conn.write(job(acme, { validFrom: '2019-01-01' }))
    await conn.write(job(beta, { validFrom: '2023-01-01', supersedes: [a.slug] }))
    const { outgoing } = await conn.inspect('Dana Reyes')
    expect(outgoing.map((r) => [r.target, r.current])).toEqual([['Acme Corp', false], ['Beta Labs', undefined]])
    const { incoming } = await conn.inspect('Acme Corp')
    expect(incoming.map((r) => [r.source, r.current])).toEqual([['Dana Reyes', false]])
  })

  it('refuses a bad asOf or history', async () => {
    const { conn } = await fixture()
    await expect(conn.recall({ asOf: 'yesterday' })).rejects.toMatchObject({ code: 'invalid_request' })
    await expect(conn.recall({ history: 'some' as never })).rejects.toMatchObject({ code: 'invalid_request' })
  })

  it('keeps the timeline across a reopen', async () => {
    const f = await fixture()
    const a = await f.conn.write(job(acme, { observedAt: '2020-01-01' }))
    const b = await f.conn.write(job(beta, { observedAt: '2023-01-01', supersedes: [a.slug] }))
    await f.memory.close()
    const again = await f.reopen()
    const conn = await again.connect({ agent: 'again' })
    expect(await slugsOf(conn, {})).toEqual([b.slug])
    expect(await slugsOf(conn, { asOf: '2021-01-01' })).toEqual([a.slug])
  })

  it('a backup carries world time: the restored memory answers the same', async () => {
    const f = await fixture()
    const a = await f.conn.write(job(acme, { observedAt: '2020-01-01', relationships: [{ source: dana.name, type: 'works_at', target: acme.name, validTo: '2030-01-01' }] }))
    const b = await f.conn.write(job(beta, { validFrom: '2023-06-01', supersedes: [a.slug] }))
    const restored = await importMemory(JSON.parse(JSON.stringify(await exportMemory(f.memory))), { indexedDB: new IDBFactory(), IDBKeyRange })
    const conn = await restored.connect({ agent: 'restored' })
    expect(await conn.getObservation(b.slug)).toEqual(await f.conn.getObservation(b.slug))
    expect(await slugsOf(conn, {})).toEqual([b.slug])
    expect(await slugsOf(conn, { asOf: '2021-01-01' })).toEqual([a.slug])
  })

  it('after a reopen that left the notes in storage, a note may supersede one not read yet', async () => {
    const f = await fixture()
    const a = await f.conn.write(job(acme, { observedAt: '2020-01-01' }))
    await f.memory.close()
    const again = await f.reopen()
    const conn = await again.connect({ agent: 'again' })
    // a note sharing no entity with the one it replaces: the write reads that one itself
    const b = await conn.write({ title: 'Acme closed', content: 'Acme closed its doors.', observedAt: '2023-01-01', entities: [beta], supersedes: [a.slug] })
    expect(await slugsOf(conn, {})).toEqual([])
    expect((await conn.recall({ entity: 'Dana Reyes', history: 'all' })).observations.find((o) => o.slug === a.slug)!.supersededBy).toEqual([b.slug])
  })

  it('recall does not reach a neighbor through an edge that no longer holds', async () => {
    const { conn } = await fixture()
    const a = await conn.write(job(acme, { observedAt: '2020-01-01' }))
    await conn.write({ title: 'Acme', content: 'Acme makes anvils.', entities: [acme] })
    await conn.write({ title: 'Dana leaves', content: 'Dana left Acme.', entities: [dana], observedAt: '2023-01-01', supersedes: [a.slug] })
    const names = async (request: Record<string, unknown>) => (await conn.recall({ query: 'Dana Reyes engineer payments', ...request })).entities.map((e) => e.name)
    expect(await names({})).toEqual(['Dana Reyes'])
    expect(await names({ asOf: '2021-01-01' })).toEqual(['Dana Reyes', 'Acme Corp'])
  })
})
