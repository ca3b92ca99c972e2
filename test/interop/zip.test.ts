// The vault's ZIP: entries a standard reader takes back byte for byte, and paths that could
// escape the folder it unpacks into are refused.
import { execFileSync } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { crc32 as nodeCrc32 } from 'node:zlib'
import { crc32, zipStore } from '../../src/interop/zip'
import { readStoredZip } from './zip-reader'

const entries = [
  { path: 'vault/index.md', data: '# Field notes\n' },
  { path: 'vault/entities/Zoë Ångström.md', data: '---\nname: "Zoë Ångström"\n---\n[[notes/a|A]]\n' },
  { path: 'vault/files/scan.bin', data: Uint8Array.from({ length: 3000 }, (_, i) => (i * 7919) & 0xff) },
  { path: 'vault/notes/empty.md', data: '' },
]

describe('zipStore', () => {
  it('computes the standard CRC-32', () => {
    for (const text of ['', 'a', 'The quick brown fox jumps over the lazy dog', 'Zoë']) {
      const bytes = new TextEncoder().encode(text)
      expect(crc32(bytes)).toBe(nodeCrc32(bytes))
    }
  })

  it('holds every entry, UTF-8 names and binary data intact', () => {
    const read = readStoredZip(zipStore(entries, new Date('2026-12-03T10:20:30Z')))
    expect([...read.keys()]).toEqual(entries.map((e) => e.path))
    for (const e of entries) {
      expect(Buffer.from(read.get(e.path)!)).toEqual(Buffer.from(typeof e.data === 'string' ? new TextEncoder().encode(e.data) : e.data))
    }
  })

  it.skipIf(!existsSync('/usr/bin/unzip'))('is read by Info-ZIP unzip, which tests every CRC', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cairn-zip-'))
    try {
      writeFileSync(join(dir, 'v.zip'), zipStore(entries))
      const listing = execFileSync('unzip', ['-t', join(dir, 'v.zip')], { encoding: 'utf8' })
      expect(listing).toContain('No errors detected')
      expect(execFileSync('unzip', ['-p', join(dir, 'v.zip'), 'vault/entities/Zoë Ångström.md'], { encoding: 'utf8' })).toBe(entries[1]!.data)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('refuses paths that would leave the folder, and two entries at one path', () => {
    for (const path of ['../x.md', '/etc/x', 'a//b', 'a/../../b', '', 'notes\\..\\..\\x.md', 'a/./b', 'a\u0000b']) {
      expect(() => zipStore([{ path, data: 'x' }])).toThrow(expect.objectContaining({ code: 'unsafe_path' }))
    }
    expect(() => zipStore([{ path: 'a.md', data: 'x' }, { path: 'a.md', data: 'y' }])).toThrow(expect.objectContaining({ code: 'invalid_request' }))
  })
})
