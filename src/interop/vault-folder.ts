// Writes a memory's Markdown vault into a folder (Node: `cairn export --markdown DIR`).
import { mkdir, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import type { Memory } from '../engine/memory-handle'
import { buildMarkdownVault, type VaultReport } from './markdown-vault'

export async function writeMarkdownVault(memory: Memory, dir: string): Promise<VaultReport> {
  const { files, report } = await buildMarkdownVault(memory)
  // notes/ and entities/ exist even when empty, as a vault's layout says where things go
  await mkdir(join(dir, 'notes'), { recursive: true })
  await mkdir(join(dir, 'entities'), { recursive: true })
  for (const f of files) {
    const target = join(dir, ...f.path.split('/'))
    await mkdir(dirname(target), { recursive: true })
    await writeFile(target, f.data)
  }
  return report
}
