import { describe, expect, it } from 'vitest'
import { LIMITS } from '../../src/core/limits'
import { OPERATION_TIER } from '../../src/core/access'
import { TOOLS, toolInputSchema, toolListing } from '../../src/tools/definitions'

type Schema = { type?: string; description?: string; properties?: Record<string, Schema>; items?: Schema; required?: string[]; additionalProperties?: unknown; maxLength?: number }

/** Every property at any depth, with its path, so a missing description anywhere is caught. */
function properties(schema: Schema, at = ''): Array<[string, Schema]> {
  const out: Array<[string, Schema]> = []
  for (const [k, v] of Object.entries(schema.properties ?? {})) {
    out.push([`${at}${k}`, v], ...properties(v, `${at}${k}.`))
    if (v.items) out.push(...properties(v.items, `${at}${k}[].`))
  }
  return out
}

describe('tool definitions', () => {
  it('cover every connection operation once, under distinct names', () => {
    expect(new Set(TOOLS.map((t) => t.operation))).toEqual(new Set(Object.keys(OPERATION_TIER)))
    expect(new Set(TOOLS.map((t) => t.name)).size).toBe(TOOLS.length)
    for (const name of ['write', 'update', 'delete', 'recall', 'get_observation', 'inspect_entity', 'list_files', 'read_file', 'store_file', 'consolidate', 'accept_proposal', 'reject_proposal', 'list_single_valued', 'set_single_valued']) {
      expect(TOOLS.some((t) => t.name === name), name).toBe(true)
    }
  })

  it.each(TOOLS.map((t) => [t.name, t] as const))('%s has a closed object schema with descriptions', (_name, t) => {
    const schema = toolInputSchema(t) as Schema
    expect(schema.type).toBe('object')
    expect(schema.additionalProperties).toBe(false)
    expect(t.description.length).toBeGreaterThan(60)
    // Top-level fields (and nested object fields) all explain themselves; JSON must round-trip.
    for (const [path, prop] of properties(schema)) {
      expect(prop.description, `${t.name}.${path}`).toBeTruthy()
    }
    expect(JSON.parse(JSON.stringify(schema))).toEqual(schema)
  })

  it('carry the contract limits and guidance a model needs', () => {
    const write = TOOLS.find((t) => t.name === 'write')!
    const schema = toolInputSchema(write) as Schema
    expect(schema.required).toEqual(['title', 'content'])
    expect(schema.properties!.content!.maxLength).toBe(LIMITS.contentHardChars)
    // a description is required of new entities only, which the engine knows and the schema cannot
    expect(schema.properties!.entities!.items!.required).toEqual(['name'])
    expect(write.description).toMatch(/new to this memory needs a non-empty description/)
    expect(write.description).toContain(String(LIMITS.contentSoftChars))
    expect(write.description).toMatch(/description/)
    expect(write.description).toMatch(/relationships/i)
    const recall = TOOLS.find((t) => t.name === 'recall')!
    for (const word of ['category', 'tags', 'from/to', 'entity', 'limits']) expect(recall.description).toContain(word)
  })

  it('lists each tool with the tier it needs', () => {
    const listing = toolListing()
    expect(listing.find((t) => t.name === 'delete')!.description).toMatch(/full connection/)
    expect(listing.find((t) => t.name === 'write')!.description).toMatch(/read_write connection/)
    expect(listing.find((t) => t.name === 'recall')!.description).toMatch(/read connection/)
  })
})
