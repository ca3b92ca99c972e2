// The tools carry world time: write and update take validFrom, validTo and supersedes, recall
// takes asOf and history, and bad values come back as the contract's errors.
import { describe, expect, it } from 'vitest'
import { dispatchTool, type ToolOutcome } from '../../src/tools/dispatch'
import type { RecallResult } from '../../src/index'
import { fixture } from '../engine/fixture'

function result<T>(o: ToolOutcome): T {
  if (!o.ok) throw new Error(`expected a result, got ${JSON.stringify(o.error)}`)
  return o.result as T
}

const dana = { name: 'Dana', type: 'person', description: 'An engineer' }
const job = (org: string, extra: Record<string, unknown>) => ({ title: `Dana at ${org}`, content: `Dana works at ${org}.`, entities: [dana, { name: org, type: 'organization', description: `The company ${org}` }], relationships: [{ source: 'Dana', type: 'works_at', target: org, validFrom: '2019-01-01' }], ...extra })

describe('tools and world time', () => {
  it('write supersedes, recall answers now, as of a date and with history', async () => {
    const f = await fixture()
    const a = result<{ slug: string }>(await dispatchTool(f.conn, 'write', job('Acme', { validFrom: '2020-01-01' })))
    const b = result<{ slug: string }>(await dispatchTool(f.conn, 'write', job('Beta', { validFrom: '2023-01-01', supersedes: [a.slug] })))
    const now = result<RecallResult>(await dispatchTool(f.conn, 'recall', { entity: 'Dana' }))
    expect(now.observations.map((o) => o.slug)).toEqual([b.slug])
    expect(now.superseded).toBe(1)
    const then = result<RecallResult>(await dispatchTool(f.conn, 'recall', { entity: 'Dana', asOf: '2021-01-01' }))
    expect(then.observations.map((o) => o.slug)).toEqual([a.slug])
    const all = result<RecallResult>(await dispatchTool(f.conn, 'recall', { entity: 'Dana', history: 'all' }))
    expect(all.observations.find((o) => o.slug === a.slug)).toMatchObject({ supersededBy: [b.slug], current: false })
    // update clears the supersession: both hold again
    result(await dispatchTool(f.conn, 'update', { slug: b.slug, supersedes: null }))
    expect(result<RecallResult>(await dispatchTool(f.conn, 'recall', { entity: 'Dana' })).observations).toHaveLength(2)
  })

  it('refuses a reversed interval or a bad history value', async () => {
    const f = await fixture()
    const bad = await dispatchTool(f.conn, 'write', job('Acme', { validFrom: '2022-01-01', validTo: '2021-01-01' }))
    expect(bad.ok).toBe(false)
    expect(JSON.stringify(bad)).toContain('validTo')
    expect((await dispatchTool(f.conn, 'recall', { history: 'everything' })).ok).toBe(false)
  })
})
