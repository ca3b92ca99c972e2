// Keeps a local memory across restarts as one JSON file of observations and aliases. Entities,
// relationships and the index are derived, so they are rebuilt on load, and slugs survive.
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { MemoryError } from '../core/errors'
import type { Alias, Observation } from '../core/types'
import type { Memory } from '../engine/open'

export const SNAPSHOT_FILE = 'memory.json'

interface Snapshot {
  version: 1
  observations: Observation[]
  aliases: Alias[]
}

async function load(path: string): Promise<Snapshot | undefined> {
  let text: string
  try {
    text = await readFile(path, 'utf8')
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw new MemoryError('storage_failed', `cannot read ${path}: ${(e as Error).message}`)
  }
  let data: Partial<Snapshot> | null
  try {
    data = JSON.parse(text) as Partial<Snapshot> | null
  } catch {
    data = null
  }
  if (!data || data.version !== 1 || !Array.isArray(data.observations) || !Array.isArray(data.aliases)) {
    throw new MemoryError('storage_failed', `${path} is not a memory snapshot (version 1 with observations and aliases); move it aside to start empty`)
  }
  return data as Snapshot
}

/**
 * Loads `dir/memory.json` into `memory`, then rewrites it after every commit. Writes are
 * serialized and go through a temporary file, so a crash leaves the previous snapshot whole.
 * Appendix files and connections are not kept.
 */
export async function persistToDirectory(memory: Memory, dir: string): Promise<{ flush(): Promise<void>; stop(): Promise<void> }> {
  await mkdir(dir, { recursive: true })
  const path = join(dir, SNAPSHOT_FILE)
  const saved = await load(path)
  if (saved) await memory.engine.importObservations(saved.observations, saved.aliases)

  let chain: Promise<void> = Promise.resolve()
  let dirty = false
  const save = (): Promise<void> => {
    dirty = true
    chain = chain.then(async () => {
      if (!dirty) return
      dirty = false
      const { observations, aliases } = memory.engine.snapshotState()
      const now = new Date().toISOString()
      const snapshot: Snapshot = { version: 1, observations, aliases: [...aliases].map(([variant, canonical]) => ({ variant, canonical, createdAt: now })) }
      await writeFile(`${path}.tmp`, JSON.stringify(snapshot))
      await rename(`${path}.tmp`, path)
    })
    return chain
  }
  const unsubscribe = memory.engine.onCommitted(() => void save().catch((e: unknown) => process.stderr.write(`cairn: could not save ${path}: ${(e as Error).message}\n`)))
  return {
    flush: () => chain,
    async stop() {
      unsubscribe()
      await chain
    },
  }
}
