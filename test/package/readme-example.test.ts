// The README's "library in ten lines" runs as printed: its code block, with the package import
// pointed at the source and a global IndexedDB (fake-indexeddb's, set before Dexie loads), as a
// browser has one.
import 'fake-indexeddb/auto'
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { createMemory } from '../../src/index'

const README = readFileSync(new URL('../../README.md', import.meta.url), 'utf8')

function tenLines(): string {
  const section = README.slice(README.indexOf('## The library in ten lines'))
  const block = /```ts\n([\s\S]*?)```/.exec(section)
  if (!block) throw new Error('the README has no code block under "The library in ten lines"')
  return block[1]!
}

describe('the README example', () => {
  it('is ten lines or so, imports only createMemory from the package, and recalls what it wrote', async () => {
    const code = tenLines()
    const lines = code.trim().split('\n')
    expect(lines.length).toBeLessThanOrEqual(12)
    expect(lines[0]).toBe("import { createMemory } from 'cairn-memory'")
    // the rest of the block is plain JavaScript: run it with createMemory in scope
    const AsyncFunction = Object.getPrototypeOf(async () => undefined).constructor as new (...args: string[]) => (...a: unknown[]) => Promise<unknown>
    const run = new AsyncFunction('createMemory', `${lines.slice(1).join('\n')}\nreturn { entities, relationships, observations }`)
    const got = (await run(createMemory)) as { entities: Array<{ name: string }>; relationships: Array<{ type: string }>; observations: Array<{ title: string }> }
    expect(got.entities.map((e) => e.name)).toContain('Ada Lovelace')
    expect(got.relationships.map((r) => r.type)).toContain('wrote_notes_on')
    expect(got.observations.map((o) => o.title)).toEqual(['Ada and the engine'])
  })
})
