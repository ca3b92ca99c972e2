import { describe, expect, it } from 'vitest'
import { Graph } from '../../src/core/graph'
import { graphFingerprint } from '../helpers/graph-fingerprint'
import { validateObservationInput } from '../../src/core/contract'
import type { Observation, ObservationInput } from '../../src/core/types'
import { engineOf } from '../../src/internals'
import { ada, engine, fixture, society } from './fixture'

const at = '2026-01-02T00:00:00.000Z'
/** A stored observation as a write would make it, under a chosen slug. */
function note(slug: string, input: Partial<ObservationInput>): Observation {
  const { warnings: _, ...fields } = validateObservationInput({ title: slug, content: `about ${slug}`, ...input })
  return { slug, ...fields, observedAt: fields.observedAt ?? at, createdBy: 'import', createdAt: at, updatedAt: at }
}

describe('importing observations as one commit', () => {
  it('leaves the graph a derivation of every note gives, with the aliases, the indexes and the duplicate check current', async () => {
    const f = await fixture()
    await f.conn.write({ title: 'kept', content: 'before the import', entities: [ada, engine], relationships: [{ source: ada.name, type: 'worked_on', target: engine.name }] })
    const imported = [
      note('i-1', { entities: [{ name: 'Countess Lovelace', type: 'person', description: 'Ada, by her title' }, society], relationships: [{ source: 'Countess Lovelace', type: 'member_of', target: society.name }] }),
      note('i-2', { entities: [{ name: 'Difference Engine', type: 'project', description: 'an earlier calculating machine of Babbage' }] }),
    ]
    const mem = engineOf(f.memory)
    expect(await mem.importObservations(imported, [{ variant: 'countess lovelace', canonical: 'ada lovelace', createdAt: at }])).toBe(2)
    const graph = mem.committedGraph
    expect(graphFingerprint(graph)).toBe(graphFingerprint(Graph.derive(graph.allObservations(), graph.aliasMap())))
    expect(graph.entities.has('countess lovelace')).toBe(false)
    expect(graph.entities.get('ada lovelace')?.observations).toHaveLength(2)
    expect(graph.entities.get('ada lovelace')?.observations).toContain('i-1')
    expect([...graph.relationships.values()].map((r) => `${r.source} ${r.type} ${r.target}`).sort()).toEqual(['ada lovelace member_of royal society', 'ada lovelace worked_on analytical engine'])
    // the imported entities and notes are searchable, and a later write sees their names
    expect((await f.conn.recall({ query: 'earlier calculating machine' })).entities[0]?.name).toBe('Difference Engine')
    const w = await f.conn.write({ title: 'later', content: 'x', entities: [{ name: 'The Royal Society', type: 'organization', description: 'the same society' }] })
    expect(w.possibleDuplicates.map((d) => d.existing)).toContain('Royal Society')
    const expected = graphFingerprint(graph)
    await f.memory.close()
    const again = await f.reopen()
    expect(graphFingerprint(engineOf(again).committedGraph)).toBe(expected)
    await again.close()
  })

  it('a second import of the same notes changes nothing', async () => {
    const f = await fixture()
    const mem = engineOf(f.memory)
    await mem.importObservations([note('i-1', { entities: [ada] })], [])
    const before = graphFingerprint(mem.committedGraph)
    expect(await mem.importObservations([note('i-1', { entities: [society] })], [])).toBe(0)
    expect(graphFingerprint(mem.committedGraph)).toBe(before)
  })
})
