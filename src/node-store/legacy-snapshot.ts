// Reads the whole-file `memory.json` that earlier versions of the MCP server rewrote after each
// commit, so a folder written by them opens in the durable store with its observations and merges.
import { readFile } from 'node:fs/promises'
import { MemoryError } from '../core/errors'
import type { Alias, Observation } from '../core/types'

export const LEGACY_SNAPSHOT_FILE = 'memory.json'

export interface LegacySnapshot {
  version: 1
  observations: Observation[]
  aliases: Alias[]
}

export async function loadLegacySnapshot(path: string): Promise<LegacySnapshot> {
  let text: string
  try {
    text = await readFile(path, 'utf8')
  } catch (e) {
    throw new MemoryError('storage_failed', `cannot read ${path}: ${(e as Error).message}`)
  }
  let data: Partial<LegacySnapshot> | null
  try {
    data = JSON.parse(text) as Partial<LegacySnapshot> | null
  } catch {
    data = null
  }
  if (!data || data.version !== 1 || !Array.isArray(data.observations) || !Array.isArray(data.aliases)) {
    throw new MemoryError('storage_failed', `${path} is not a memory snapshot (version 1 with observations and aliases); move it aside to start empty`)
  }
  return data as LegacySnapshot
}
