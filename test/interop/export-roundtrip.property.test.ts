// Every memory the write path can build (titles in any script, with path and control pieces)
// exports to JSON and to a Markdown vault and comes back equal: the backup imports into a new
// memory with the same notes, and each vault note carries its fields back. No exported file
// lands outside the folder it was given.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve, sep } from 'node:path'
import fc from 'fast-check'
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb'
import { describe, expect, it } from 'vitest'
import { isMemoryError } from '../../src/core/errors'
import type { Observation } from '../../src/core/types'
import { exportMemory, importMemory } from '../../src/engine/backup'
import { writeMarkdownVault } from '../../src/interop/vault-folder'
import { zipStore } from '../../src/interop/zip'
import { buildMarkdownVault } from '../../src/interop/markdown-vault'
import { fixture } from '../engine/fixture'
import { ownerOf } from '../../src/internals'

const piece = fc.constantFrom('会議のメモ', 'Σημειώσεις', 'Ünïcödé', 'مرحبا', '𠀀𝐀', '../', '..', '/', '\\', '.', ' ', 'C:', 'nul', '\u202e', '\t', 'Notes', '#', '|', '[[x]]', '\u0000')
const title = fc.oneof(fc.string({ unit: 'grapheme', minLength: 1, maxLength: 40 }), fc.array(piece, { minLength: 1, maxLength: 8 }).map((p) => p.join('')))
const note = fc.record({ title, content: fc.oneof(fc.string({ unit: 'grapheme', minLength: 1, maxLength: 60 }), piece), tags: fc.array(fc.constantFrom('a', 'b', 'メモ'), { maxLength: 2 }) })

const byslug = (a: Observation, b: Observation) => (a.slug < b.slug ? -1 : a.slug > b.slug ? 1 : 0)

/** A vault note's front matter (one JSON value a line) and body. */
function readNote(text: string): { fields: Record<string, unknown>; body: string } {
  const end = text.indexOf('\n---\n', 4)
  const fields = Object.fromEntries(text.slice(4, end).split('\n').map((line) => {
    const at = line.indexOf(': ')
    return [line.slice(0, at), JSON.parse(line.slice(at + 2)) as unknown]
  }))
  return { fields, body: text.slice(end + 5) }
}

describe('exports of any memory the write path builds', () => {
  it('import back equal, and stay inside their folder', { timeout: 120_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(note, { minLength: 1, maxLength: 4 }), async (notes) => {
        const f = await fixture()
        const dir = mkdtempSync(join(tmpdir(), 'cairn-roundtrip-'))
        try {
          for (const n of notes) {
            // inputs the contract refuses (a title of spaces alone) are not part of any memory
            await f.conn.write(n).catch((err: unknown) => {
              if (!isMemoryError(err) || err.code !== 'invalid_write') throw err
            })
          }
          const mine = [...ownerOf(f.memory).committed.allObservations()].sort(byslug)

          const copy = await importMemory(JSON.parse(JSON.stringify(await exportMemory(f.memory))), { indexedDB: new IDBFactory(), IDBKeyRange })
          expect([...ownerOf(copy).committed.allObservations()].sort(byslug)).toEqual(mine)
          await copy.close()

          const vault = join(dir, 'vault')
          expect((await writeMarkdownVault(f.memory, vault)).notes).toBe(mine.length)
          const files = readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name))
          for (const file of files) expect(file.startsWith(resolve(vault) + sep)).toBe(true)
          for (const o of mine) {
            const { fields, body } = readNote(readFileSync(join(vault, 'notes', `${o.slug}.md`), 'utf8'))
            expect({ slug: fields.slug, title: fields.title, tags: fields.tags ?? [], created: fields.created, updated: fields.updated, body }).toEqual({
              slug: o.slug, title: o.title, tags: o.tags, created: o.createdAt, updated: o.updatedAt, body: `# ${o.title}\n\n${o.content}\n`,
            })
          }
          // the app's download: the same files in a zip under one folder
          const { files: built } = await buildMarkdownVault(f.memory)
          expect(() => zipStore(built.map((b) => ({ ...b, path: `vault/${b.path}` })))).not.toThrow()
        } finally {
          await f.memory.close()
          rmSync(dir, { recursive: true, force: true })
        }
      }),
      { numRuns: 40, seed: 7 },
    )
  })
})
