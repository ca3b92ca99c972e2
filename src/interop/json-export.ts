// The whole memory as one JSON document: the backup (which `cairn import` and the app read back)
// plus the derived entities and relationships, for tools that want the graph without deriving it.
import type { Entity, Relationship } from '../core/types'
import { exportMemory, type MemoryBackup } from '../engine/backup'
import type { Memory } from '../engine/memory-handle'
import { ownerOf } from '../engine/owner-door'

export interface GraphExport extends MemoryBackup {
  graph: { entities: Entity[]; relationships: Array<Relationship & { sourceName: string; targetName: string }> }
}

export async function exportGraphJson(memory: Memory): Promise<GraphExport> {
  const backup = await exportMemory(memory)
  await ownerOf(memory).notesHeld()
  const graph = ownerOf(memory).committed
  const name = (key: string): string => graph.entities.get(key)?.name ?? key
  return {
    ...backup,
    graph: {
      entities: structuredClone([...graph.entities.values()]),
      relationships: [...graph.relationships.values()].map((r) => ({ ...structuredClone(r), sourceName: name(r.source), targetName: name(r.target) })),
    },
  }
}
