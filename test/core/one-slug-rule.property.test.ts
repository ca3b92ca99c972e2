// The slug rule is defined once (core/identifiers) and every reader of a slug applies it: the
// tools' schemas, the peer check, backup import, and the exporters' path rule. For any input
// (hostile Unicode, path pieces, what the write path makes) they all agree; and whatever title
// a write is given, the slug it makes passes every one of them.
import fc from 'fast-check'
import { beforeAll, describe, expect, it } from 'vitest'
import { exportPathProblem, isSlug } from '../../src/core/identifiers'
import { makeSlug, slugBase } from '../../src/core/slug'
import { exportMemory, parseBackup, type MemoryBackup } from '../../src/engine/backup'
import { randomId } from '../../src/engine/tokens'
import { checkObservation } from '../../src/sync/validate'
import { slugArgs } from '../../src/tools/schemas'
import { fixture } from '../engine/fixture'
import { observation } from '../sync/fixture'

const piece = fc.constantFrom(
  'a', 'z', '7', '-', '--', '.', '..', '/', '\\', ' ', '_', 'A', 'É', 'é', 'e\u0301', 'ß', 'İ', 'Σ', 'ς',
  '会議', 'のメモ', 'が', '\u3099', '١٢', 'ａ', '𝐀', '𠀀', '\u0000', '\u001f', '\u202e', '\u200b', '\uFEFF', '\ud800', 'notes', 'md',
)
const candidate = fc.oneof(
  fc.array(piece, { maxLength: 10 }).map((p) => p.join('')),
  fc.string({ unit: 'grapheme', maxLength: 30 }),
  fc.string({ unit: 'binary', maxLength: 30 }),
  fc.tuple(piece, fc.integer({ min: 50, max: 120 })).map(([p, n]) => `a-${p.repeat(n)}`),
  fc.string({ unit: 'binary', maxLength: 80 }).map((title) => makeSlug(title, () => false, () => randomId(6))),
)

let backup: MemoryBackup
beforeAll(async () => {
  const f = await fixture()
  await f.conn.write({ title: 'One note', content: 'its content' })
  backup = await exportMemory(f.memory)
  await f.memory.close()
})

async function backupTakes(slug: string): Promise<boolean> {
  try {
    await parseBackup({ ...backup, observations: [{ ...backup.observations[0]!, slug }] })
    return true
  } catch {
    return false
  }
}

describe('one slug rule', () => {
  it('the tools, the peer check and backup import accept exactly the same slugs, and every accepted one is a safe file name', { timeout: 60_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(candidate, async (slug) => {
        const rule = isSlug(slug)
        const verdicts = {
          slug,
          tools: slugArgs.safeParse({ slug }).success,
          peer: checkObservation(slug, observation(slug, { title: 'A title', content: 'Some content', entities: [] })).ok,
          backup: await backupTakes(slug),
        }
        expect(verdicts).toEqual({ slug, tools: rule, peer: rule, backup: rule })
        if (rule) expect(exportPathProblem(`notes/${slug}.md`)).toBeNull()
      }),
      { numRuns: 600, seed: 39 },
    )
  })

  it('every slug the write path makes passes the rule, whatever the title', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: 'binary', maxLength: 200 }), fc.array(piece, { maxLength: 80 }).map((p) => p.join(''))), (title) => {
        const slug = makeSlug(title, () => false, () => randomId(6))
        expect({ title, ok: isSlug(slug) }).toEqual({ title, ok: true })
        expect(slugBase(title).length).toBeGreaterThan(0)
      }),
      { numRuns: 2_000, seed: 42 },
    )
  })
})
