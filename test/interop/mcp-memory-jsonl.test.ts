// Mapping the official MCP memory server's file onto Cairn's contract: nothing invented, and
// everything left out is named in the report.
import { describe, expect, it } from 'vitest'
import { LIMITS } from '../../src/core/limits'
import { importMcpMemory } from '../../src/interop/import'
import { convertMcpMemory } from '../../src/interop/mcp-memory-jsonl'
import { fixture } from '../engine/fixture'
import { engineOf } from '../../src/internals'

const line = (o: unknown) => JSON.stringify(o)
const entity = (name: string, observations: string[], entityType = 'person') => line({ type: 'entity', name, entityType, observations })
const relation = (from: string, relationType: string, to: string) => line({ type: 'relation', from, to, relationType })
let n = 0
const opts = (existing: string[] = []) => ({ now: '2026-01-01T00:00:00.000Z', createdBy: 'import', random: () => `r${n++}`, exists: (k: string) => existing.includes(k), taken: () => false, source: 'mcp-memory:test' })

describe('MCP memory JSONL', () => {
  it('makes one note per entity, described by its strings, with its relations; reports what it leaves out', () => {
    const text = [
      entity('Ada Lovelace', ['Wrote the first algorithm', 'Born in 1815']),
      entity('ada lovelace', ['Daughter of Lord Byron']), // the same entity to Cairn: names are normalized
      entity('Analytical Engine', ['Mechanical computer'], 'machine'),
      entity('Charles Babbage', []),
      relation('Ada Lovelace', 'wrote programs for', 'Analytical Engine'),
      relation('Ada Lovelace', 'wrote programs for', 'Analytical Engine'),
      relation('Charles Babbage', 'designed', 'Analytical Engine'),
      relation('Ada Lovelace', 'knew', 'Mary Somerville'),
      relation('Ada Lovelace', 'is', 'ada lovelace'),
      relation('Analytical Engine', 'inspired', 'Existing Thing'),
      '{broken',
      line({ type: 'note', text: 'x' }),
      '',
    ].join('\n')
    const { observations, report } = convertMcpMemory(text, opts(['existing thing']))
    expect(report.entities).toEqual({ read: 4, imported: 2, mergedByName: ['ada lovelace'], withoutObservations: ['Charles Babbage'] })
    expect(report.observationStrings).toEqual({ read: 4, imported: 4, cut: 0 })
    expect(report.relations.read).toBe(6)
    expect(report.relations.imported).toBe(2)
    expect(report.relations.skipped.map((s) => [s.from, s.to, s.reason])).toEqual([
      ['Ada Lovelace', 'Analytical Engine', 'repeats a relation already imported'],
      ['Charles Babbage', 'Analytical Engine', '"Charles Babbage" has no observations to describe it'],
      ['Ada Lovelace', 'Mary Somerville', '"Mary Somerville" is not an entity of the file'],
      ['Ada Lovelace', 'ada lovelace', 'connects an entity to itself'],
    ])
    expect(report.invalidLines).toEqual([
      { line: 11, reason: 'not JSON' },
      { line: 12, reason: 'unknown type "note"' },
    ])
    const ada = observations.find((o) => o.title === 'Ada Lovelace')!
    expect(ada.content).toBe('- Wrote the first algorithm\n- Born in 1815\n- Daughter of Lord Byron')
    expect(ada.entities).toEqual([{ name: 'Ada Lovelace', type: 'person', description: 'Wrote the first algorithm; Born in 1815; Daughter of Lord Byron', queries: [] }])
    expect(ada.relationships).toEqual([expect.objectContaining({ source: 'Ada Lovelace', type: 'wrote_programs_for', target: 'Analytical Engine' })])
    expect(ada).toMatchObject({ category: 'imported', tags: ['mcp-memory'], source: 'mcp-memory:test', createdBy: 'import' })
    // a relation may end at an entity the memory already has
    expect(observations.find((o) => o.title === 'Analytical Engine')!.relationships).toEqual([expect.objectContaining({ target: 'Existing Thing' })])
  })

  it('splits an entity with many strings into notes under the soft cap, stating its relations once', () => {
    const strings = Array.from({ length: 60 }, (_, i) => `fact number ${i} ${'x'.repeat(80)}`)
    const huge = 'y'.repeat(LIMITS.contentHardChars + 100)
    const text = [entity('Big', [...strings, huge]), entity('Other', ['other thing']), relation('Big', 'knows', 'Other')].join('\n')
    const { observations, report } = convertMcpMemory(text, opts())
    const notes = observations.filter((o) => o.entities[0]!.name === 'Big')
    expect(notes.length).toBeGreaterThan(2)
    expect(notes.every((o) => o.content.length <= LIMITS.contentHardChars)).toBe(true)
    expect(notes.slice(0, -1).every((o) => o.content.length <= LIMITS.contentSoftChars)).toBe(true)
    expect(notes.flatMap((o) => o.relationships)).toHaveLength(1)
    expect(notes.map((o) => o.content.split('\n').length).reduce((a, b) => a + b)).toBe(61)
    expect(report.observationStrings).toEqual({ read: 62, imported: 62, cut: 1 })
    expect(notes[0]!.title).toBe(`Big (1 of ${notes.length})`)
  })

  it('imports into a memory in one commit, and refuses a file with no MCP memory lines without writing anything', async () => {
    const f = await fixture()
    const report = await importMcpMemory(f.memory, [entity('Grace Hopper', ['Built the first compiler']), entity('COBOL', ['A business language'], 'language'), relation('Grace Hopper', 'shaped', 'COBOL')].join('\n'))
    expect(report.notes).toBe(2)
    const detail = await f.conn.inspect('Grace Hopper')
    expect(detail.outgoing).toEqual([expect.objectContaining({ target: 'COBOL' })])
    expect((await f.conn.recall({ query: 'compiler' })).entities[0]!.name).toBe('Grace Hopper')

    await expect(importMcpMemory(f.memory, '{"format":"something else"}\n{"a":1}')).rejects.toMatchObject({ code: 'invalid_request' })
    expect([...engineOf(f.memory).committedGraph.allObservations()]).toHaveLength(2)
    await f.memory.close()
  })
})
