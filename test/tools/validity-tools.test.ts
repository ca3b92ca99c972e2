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

  it('declares and lists single-valued types (full tier only), and consolidate then proposes a supersession to accept', async () => {
    const f = await fixture()
    const rw = await f.memory.connect({ agent: 'writer', tier: 'read_write' })
    const reader = await f.memory.connect({ agent: 'reader', tier: 'read' })
    const refused = await dispatchTool(rw, 'set_single_valued', { types: ['works_at'] })
    expect(refused.ok || refused.error.code).toBe('forbidden')
    expect(f.memory.singleValued()).toEqual([])
    const bad = await dispatchTool(f.conn, 'set_single_valued', { types: ['works_at', ''] })
    expect(bad.ok || bad.error.code).toBe('invalid_request')
    expect(f.memory.singleValued()).toEqual([])
    expect(result<string[]>(await dispatchTool(f.conn, 'set_single_valued', { types: ['Works At', 'lives_in'] }))).toEqual(['lives_in', 'works_at'])
    expect(result<string[]>(await dispatchTool(reader, 'list_single_valued', {}))).toEqual(['lives_in', 'works_at'])
    const a = result<{ slug: string }>(await dispatchTool(rw, 'write', job('Acme', { validFrom: '2020-01-01' })))
    const b = result<{ slug: string }>(await dispatchTool(rw, 'write', job('Beta', { validFrom: '2023-01-01' })))
    const proposals = result<Array<{ id: string; kind: string; supersede?: { older: string; newer: string } }>>(await dispatchTool(rw, 'consolidate', {}))
    const p = proposals.find((x) => x.kind === 'supersede')
    expect(p?.supersede).toMatchObject({ older: a.slug, newer: b.slug })
    result(await dispatchTool(rw, 'accept_proposal', { id: p!.id }))
    const now = result<RecallResult>(await dispatchTool(reader, 'recall', { entity: 'Dana' }))
    expect(now.observations.map((o) => o.slug)).not.toContain(a.slug)
    expect(now.superseded).toBe(1)
    // an empty list clears the declaration
    expect(result<string[]>(await dispatchTool(f.conn, 'set_single_valued', { types: [] }))).toEqual([])
    expect(result<string[]>(await dispatchTool(reader, 'list_single_valued', {}))).toEqual([])
  })

  it('refuses a reversed interval or a bad history value', async () => {
    const f = await fixture()
    const bad = await dispatchTool(f.conn, 'write', job('Acme', { validFrom: '2022-01-01', validTo: '2021-01-01' }))
    expect(bad.ok).toBe(false)
    expect(JSON.stringify(bad)).toContain('validTo')
    expect((await dispatchTool(f.conn, 'recall', { history: 'everything' })).ok).toBe(false)
  })
})
