// The validity fields (validFrom, validTo, supersedes, and an edge's own dates) under the one
// definition: the contract and the zod schema accept alike, what a write stores passes the peer
// check unchanged, and the peer check refuses what no write stores.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { validateObservationInput, type ValidObservation } from '../../src/core/contract'
import type { Observation } from '../../src/core/types'
import { checkObservation } from '../../src/sync/validate'
import { updateArgs, writeArgs } from '../../src/tools/schemas'
import { validatePatch } from '../../src/core/contract'

const NOW = '2026-03-14T09:30:00.000Z'

// null means "absent" to the contract but not to the schemas, for every optional field: only patches use it (to clear)
const dateLike = fc.oneof(
  fc.date({ min: new Date('1900-01-01'), max: new Date('2100-01-01'), noInvalidDate: true }).map((d) => d.toISOString()),
  fc.date({ min: new Date('1900-01-01'), max: new Date('2100-01-01'), noInvalidDate: true }).map((d) => d.toISOString().slice(0, 10)),
  fc.constantFrom('2023-02-30', 'yesterday', '', ' 2024-01-01 ', '2024-13-01', '2024-01-01T25:00:00Z', 12 as unknown as string),
)
const slugLike = fc.oneof(fc.constantFrom('dana-at-acme-x1', ' padded ', '', 'a'.repeat(201), '\u200B'), fc.string({ maxLength: 12 }))

const timeFields = fc.record(
  {
    validFrom: dateLike,
    validTo: dateLike,
    supersedes: fc.array(slugLike, { maxLength: 3 }),
    edgeFrom: dateLike,
    edgeTo: dateLike,
  },
  { requiredKeys: [] },
)

function inputWith(t: { validFrom?: string; validTo?: string; supersedes?: string[]; edgeFrom?: string; edgeTo?: string }): Record<string, unknown> {
  const { edgeFrom, edgeTo, ...own } = t
  return {
    title: 'Dana at Acme',
    content: 'Dana works at Acme.',
    entities: [{ name: 'Dana', type: 'person', description: 'An engineer' }, { name: 'Acme', type: 'organization', description: 'A company' }],
    relationships: [{ source: 'Dana', type: 'works_at', target: 'Acme', ...(edgeFrom !== undefined ? { validFrom: edgeFrom } : {}), ...(edgeTo !== undefined ? { validTo: edgeTo } : {}) }],
    ...own,
  }
}

function accepts(input: unknown): ValidObservation | null {
  try {
    return validateObservationInput(input)
  } catch {
    return null
  }
}

function storedFrom(valid: ValidObservation): Observation {
  const { warnings: _, ...fields } = valid
  return { slug: 'dana-at-acme-1', ...fields, observedAt: fields.observedAt ?? NOW, createdBy: 'conn_test', createdAt: NOW, updatedAt: NOW }
}

describe('one validator: world time', () => {
  it('the contract and the zod schema accept alike, and what a write stores passes the peer check unchanged', () => {
    fc.assert(
      fc.property(timeFields, (t) => {
        const input = inputWith(t)
        const valid = accepts(input)
        expect({ t, zod: writeArgs.safeParse(input).success }).toEqual({ t, zod: valid !== null })
        if (!valid) return
        const stored = storedFrom(valid)
        expect(checkObservation(stored.slug, stored)).toEqual({ ok: true, value: stored })
      }),
      { numRuns: 1_000, seed: 43 },
    )
  })

  it('an update patch is judged alike by the contract and the schema', () => {
    fc.assert(
      fc.property(timeFields, fc.boolean(), (t, clear) => {
        const patch: Record<string, unknown> = clear ? { validFrom: null, validTo: null, supersedes: null } : { ...t }
        delete patch.edgeFrom
        delete patch.edgeTo
        let ok = true
        try {
          validatePatch(patch)
        } catch {
          ok = false
        }
        expect({ patch, zod: updateArgs.safeParse({ slug: 's', ...patch }).success }).toEqual({ patch, zod: ok })
      }),
      { numRuns: 500, seed: 43 },
    )
  })

  it('the peer check refuses what no write stores', () => {
    const stored = storedFrom(validateObservationInput(inputWith({ validFrom: '2020-01-01', validTo: '2021-01-01', supersedes: ['old-note'] })))
    expect(checkObservation(stored.slug, stored).ok).toBe(true)
    const refused: Array<Partial<Observation>> = [
      { validFrom: '2021-01-01T00:00:00.000Z', validTo: '2020-01-01T00:00:00.000Z' },
      { validFrom: '2020-01-01', validTo: undefined },
      { supersedes: [] },
      { supersedes: ['a', 'a'] },
      { supersedes: [' a'] },
      { supersedes: 'a' as unknown as string[] },
      { relationships: [{ ...stored.relationships[0]!, validFrom: '2022-01-01T00:00:00.000Z', validTo: '2022-01-01T00:00:00.000Z' }] },
    ]
    for (const change of refused) {
      const value = JSON.parse(JSON.stringify({ ...stored, ...change })) as Observation
      expect({ change, ok: checkObservation(value.slug, value).ok }).toEqual({ change, ok: false })
    }
  })
})
