// An appendix file's metadata is judged by one definition too: for any path, filename, media
// type or description (hostile unicode included) the library's storeFile check and the
// store_file tool's zod schema accept alike, what a write stores passes the peer check
// unchanged, and an entry the peer check accepts is exactly what storing it again would keep.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { validateFileFields } from '../../src/core/contract'
import type { AppendixFile } from '../../src/core/types'
import { validateFileInput, type FileInput } from '../../src/engine/files'
import { checkFile } from '../../src/sync/validate'
import { storeFileArgs } from '../../src/tools/schemas'

const NOW = '2026-03-14T09:30:00.000Z'
const SHA = 'a'.repeat(64)

const piece = fc.constantFrom(
  'a', 'Z', '7', ' ', '  ', '-', '_', '.', '..', '/', '//', '\\', 'docs/', '#',
  '\u0130', '\uFDFA', '\uFB03', 'e\u0301', '\u0301',
  '\u200B', '\uFEFF', '\u202E', '\u0000', '\u00A0', '\t', 'ß', 'Σ', 'text/markdown',
)
const hostile = fc.oneof(
  fc.array(piece, { maxLength: 12 }).map((p) => p.join('')),
  fc.tuple(piece, fc.integer({ min: 1, max: 600 }), fc.array(piece, { maxLength: 3 })).map(([p, n, rest]) => p.repeat(n) + rest.join('')),
  fc.integer({ min: 1, max: 2_100 }).map((n) => 'd'.repeat(n)),
)

type Field = 'path' | 'filename' | 'type' | 'description'
const FIELDS: Field[] = ['path', 'filename', 'type', 'description']

function inputWith(field: Field, value: string): Record<string, string> {
  return { path: 'docs/notes.md', filename: 'notes.md', type: 'text/markdown', description: 'Meeting notes', [field]: value }
}

async function libraryAccepts(input: Record<string, string>): Promise<FileInput | null> {
  try {
    return await validateFileInput({ ...input, data: 'x' })
  } catch {
    return null
  }
}

/** The entry a store of `valid` syncs (`storeFileRecord`'s fields). */
function storedFrom(valid: FileInput): AppendixFile {
  return { path: valid.path, filename: valid.filename, type: valid.type, size: valid.data.byteLength, description: valid.description, createdBy: 'conn_test', createdAt: NOW, sha256: SHA }
}

describe('one validator for files', () => {
  it('the library and the zod schema accept alike, and what a write stores passes the peer check unchanged', { timeout: 60_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...FIELDS), hostile, async (field, value) => {
        const input = inputWith(field, value)
        const valid = await libraryAccepts(input)
        expect({ field, value, zod: storeFileArgs.safeParse({ ...input, data: 'x' }).success }).toEqual({ field, value, zod: valid !== null })
        if (!valid) return
        const stored = storedFrom(valid)
        expect({ field, value, peer: checkFile(stored.path, stored) }).toEqual({ field, value, peer: { ok: true, value: stored } })
      }),
      { numRuns: 1_500, seed: 12 },
    )
  })

  it('an entry the peer check accepts is exactly what storing it again keeps', { timeout: 60_000 }, () => {
    fc.assert(
      fc.property(fc.constantFrom(...FIELDS), hostile, (field, value) => {
        const entry: AppendixFile = { ...(inputWith(field, value) as Pick<AppendixFile, Field>), size: 1, createdBy: 'conn_test', createdAt: NOW, sha256: SHA }
        if (!checkFile(entry.path, entry).ok) return
        const again = validateFileFields({ path: entry.path, filename: entry.filename, type: entry.type, description: entry.description })
        expect({ field, value, again }).toEqual({ field, value, again: { value: { path: entry.path, filename: entry.filename, type: entry.type, description: entry.description }, issues: [] } })
      }),
      { numRuns: 1_500, seed: 12 },
    )
  })

  it('names the cases that used to differ', async () => {
    // a filename the path gives by default must fit the filename limit, or the peers refuse it
    const longName = `docs/${'n'.repeat(300)}.md`
    expect(await libraryAccepts({ path: longName, filename: '', type: 'text/markdown', description: '' })).toBeNull()
    // stored trimmed; a peer's padded entry is one no write makes
    const padded = await libraryAccepts(inputWith('filename', '  notes.md  '))
    expect(padded?.filename).toBe('notes.md')
    expect(checkFile('docs/notes.md', { ...storedFrom(padded!), filename: '  notes.md  ' }).ok).toBe(false)
    expect(storeFileArgs.safeParse({ path: 'docs/a.md', data: 'x', type: '   ' }).success).toBe(true)
    expect((await libraryAccepts({ path: 'docs/a.md', type: '   ' } as Record<string, string>))?.type).toBe('application/octet-stream')
  })
})
