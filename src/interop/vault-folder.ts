// Writes a memory's Markdown vault into a folder (Node: `cairn export --markdown DIR`).
import { mkdir, writeFile } from 'node:fs/promises'
import { dirname, isAbsolute, relative, resolve, sep } from 'node:path'
import { MemoryError } from '../core/errors'
import { exportPathProblem } from '../core/identifiers'
import type { Memory } from '../engine/memory-handle'
import { buildMarkdownVault, type VaultFile, type VaultReport } from './markdown-vault'

/**
 * Where each file goes, every one checked before any is written: its path follows the export
 * path rule, and resolved against the folder it stays inside it. A memory's contents come from
 * its peers too, and a name that climbed out of the folder could overwrite any file the user
 * can write (a project's AGENTS.md).
 */
export function placeInFolder(dir: string, files: readonly VaultFile[]): string[] {
  const root = resolve(dir)
  return files.map((f) => {
    const problem = exportPathProblem(f.path)
    const target = resolve(root, ...f.path.split('/'))
    const rel = relative(root, target)
    if (problem !== null || rel === '' || rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel)) {
      throw new MemoryError('unsafe_path', `the export would write ${JSON.stringify(f.path.slice(0, 200))} outside ${root}${problem ? ` (the path ${problem})` : ''}; nothing was written`, { path: f.path.slice(0, 200), folder: root })
    }
    return target
  })
}

export async function writeMarkdownVault(memory: Memory, dir: string): Promise<VaultReport> {
  const { files, report } = await buildMarkdownVault(memory)
  const targets = placeInFolder(dir, files)
  // notes/ and entities/ exist even when empty, as a vault's layout says where things go
  await mkdir(resolve(dir, 'notes'), { recursive: true })
  await mkdir(resolve(dir, 'entities'), { recursive: true })
  for (const [i, f] of files.entries()) {
    const target = targets[i]!
    await mkdir(dirname(target), { recursive: true })
    await writeFile(target, f.data)
  }
  return report
}
