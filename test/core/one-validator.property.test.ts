// The write contract, the tools' zod schemas and the peer check judge one definition of an
// observation: for any input (hostile unicode included) the contract and the schema accept
// alike, what a write stores passes the peer check unchanged, and a value a peer may hold is
// exactly what a write of it would store.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { validateObservationInput, type ValidObservation } from '../../src/core/contract'
import type { Observation } from '../../src/core/types'
import { checkObservation } from '../../src/sync/validate'
import { writeArgs } from '../../src/tools/schemas'

const NOW = '2026-03-14T09:30:00.000Z'

// pieces that change length or vanish under case folding, NFKC or trimming
const piece = fc.constantFrom(
  'a', 'Z', '7', ' ', '  ', '-', '_', '!', '.', '#', '+',
  '\u0130', // İ: lowercases to two characters
  '\uFDFA', // one character, 18 after NFKC
  '\uFB03', // ffi ligature
  'e\u0301', '\u0301', // a combining mark, with and without a base
  '\u200B', '\u200D', '\uFEFF', // zero-width characters
  '\u00A0', '\t', 'Works On', 'ß', 'Σ',
)
/** Strings near and over the field limits: runs of one piece plus a few others. */
const hostile = fc.oneof(
  fc.array(piece, { maxLength: 12 }).map((p) => p.join('')),
  fc.tuple(piece, fc.integer({ min: 1, max: 260 }), fc.array(piece, { maxLength: 3 })).map(([p, n, rest]) => p.repeat(n) + rest.join('')),
)

type Field = 'title' | 'category' | 'tag' | 'source' | 'name' | 'entityType' | 'description' | 'query' | 'relationshipType' | 'endpoint' | 'relationshipDescription' | 'file'
const FIELDS: Field[] = ['title', 'category', 'tag', 'source', 'name', 'entityType', 'description', 'query', 'relationshipType', 'endpoint', 'relationshipDescription', 'file']

/** A valid write with `value` placed in `field`. */
function inputWith(field: Field, value: string): Record<string, unknown> {
  const ada = { name: field === 'name' ? value : 'Ada Lovelace', type: field === 'entityType' ? value : 'person', description: field === 'description' ? value : 'A mathematician', ...(field === 'query' ? { queries: [value] } : {}) }
  const engine = { name: field === 'endpoint' ? value : 'Analytical Engine', type: 'project', description: 'A machine' }
  return {
    title: field === 'title' ? value : 'A note',
    content: 'Some content',
    ...(field === 'category' ? { category: value } : {}),
    ...(field === 'tag' ? { tags: [value] } : {}),
    ...(field === 'source' ? { source: value } : {}),
    ...(field === 'file' ? { files: [value] } : {}),
    entities: [ada, engine],
    relationships: [{ source: ada.name, type: field === 'relationshipType' ? value : 'designed', target: engine.name, ...(field === 'relationshipDescription' ? { description: value } : {}) }],
  }
}

function authorAccepts(input: unknown): ValidObservation | null {
  try {
    return validateObservationInput(input)
  } catch {
    return null
  }
}

/** What the memory stores for a valid write (identity and timestamps added). */
function storedFrom(valid: ValidObservation): Observation {
  const { warnings: _, ...fields } = valid
  return { slug: 'a-note-1', ...fields, observedAt: fields.observedAt ?? NOW, createdBy: 'conn_test', createdAt: NOW, updatedAt: NOW }
}

/** The write an author would send to store `o` again. */
function inputFrom(o: Observation): Record<string, unknown> {
  return { title: o.title, content: o.content, category: o.category, tags: o.tags, observedAt: o.observedAt, confidence: o.confidence, source: o.source, entities: o.entities, relationships: o.relationships, files: o.files }
}

describe('one validator', () => {
  it('the contract and the zod schema accept alike, and what a write stores passes the peer check unchanged', { timeout: 60_000 }, () => {
    fc.assert(
      fc.property(fc.constantFrom(...FIELDS), hostile, (field, value) => {
        const input = inputWith(field, value)
        const valid = authorAccepts(input)
        expect({ field, value, zod: writeArgs.safeParse(input).success }).toEqual({ field, value, zod: valid !== null })
        if (!valid) return
        const stored = storedFrom(valid)
        const peer = checkObservation(stored.slug, stored)
        expect({ field, value, peer }).toEqual({ field, value, peer: { ok: true, value: stored } })
      }),
      { numRuns: 1_500, seed: 12 },
    )
  })

  it('a value the peer check accepts is exactly what writing it would store', { timeout: 60_000 }, () => {
    const base = storedFrom(validateObservationInput(inputWith('title', 'A note')))
    fc.assert(
      fc.property(fc.constantFrom(...FIELDS), hostile, (field, value) => {
        // the value placed straight into a stored observation, as a peer could
        const written = inputWith(field, value)
        const o: Observation = { ...base, ...(written as Partial<Observation>), category: (written.category as string | undefined) ?? base.category, tags: (written.tags as string[] | undefined) ?? base.tags, source: (written.source as string | undefined) ?? base.source, files: (written.files as string[] | undefined) ?? base.files }
        o.entities = (written.entities as Array<Record<string, unknown>>).map((e) => ({ queries: [], ...e }) as unknown as Observation['entities'][number])
        o.relationships = (written.relationships as Array<Record<string, unknown>>).map((r) => ({ description: '', weight: 1, ...r }) as unknown as Observation['relationships'][number])
        if (!checkObservation(o.slug, o).ok) return
        const again = authorAccepts(inputFrom(o))
        expect({ field, value, stored: again && storedFrom(again) }).toEqual({ field, value, stored: { ...o, slug: 'a-note-1' } })
      }),
      { numRuns: 1_500, seed: 12 },
    )
  })

  it('names the cases the issue found', () => {
    const entity = (name: string) => ({ ...storedFrom(validateObservationInput(inputWith('title', 'A note'))), entities: [{ name, type: 'thing', description: 'x', queries: [] }], relationships: [] })
    expect(checkObservation('a-note-1', entity('!!!')).ok).toBe(false)
    const typed = storedFrom(validateObservationInput(inputWith('relationshipType', 'Works On')))
    expect(typed.relationships[0]!.type).toBe('works_on')
    expect(checkObservation('a-note-1', { ...typed, relationships: [{ ...typed.relationships[0]!, type: 'Works On' }] }).ok).toBe(false)
    expect(authorAccepts(inputWith('tag', '\u0130'.repeat(64)))).toBeNull()
    expect(authorAccepts(inputWith('entityType', '\uFDFA'.repeat(64)))).toBeNull()
  })
})
