// What an open reads from a memory's database: everything but the observation rows in one
// transaction, the rows with what must agree with them in another, and the notes' saved texts.
import { DERIVATION_RULES } from '../core/graph'
import type { Alias, AppendixFile, ConnectionRecord, Entity, MergeProposal, Observation } from '../core/types'
import type { SavedNameBlocks } from '../core/variants'
import { GRAPH_SNAPSHOT_KEY, INDEX_SNAPSHOT_KEY, NAME_BLOCKS_KEY, NOTE_INDEX_SNAPSHOT_KEY, NOTE_TEXTS_KEY, SINGLE_VALUED_META_KEY, VALIDITY_KEY, VERSION_KEY } from '../store/commit'
import type { MemoryDB } from '../store/db'
import { DERIVATION_KEY, IMPORT_PENDING_KEY, type ImportPending } from '../store/import-pieces'
import { unpackNameBlocks, unpackNoteTexts, type SavedIndex } from '../store/open-state'
import type { SingleValuedSetting } from '../sync/layout'
import type { NoteSource } from './note-loading'

/** Reads the name blocks saved with the state `saveId` of `entities` (in save order), when first asked. */
export function nameBlocksOf(db: MemoryDB, saveId: string, entities: readonly Entity[]): () => Promise<SavedNameBlocks | undefined> {
  return async () => unpackNameBlocks((await db.meta.get(NAME_BLOCKS_KEY))?.value, saveId, entities.map((e) => e.key))
}

/** The texts of the save `saveId` from their parts' rows, or, when those are of another save, from the observation rows. */
export function noteSource(db: MemoryDB, saveId: string, slugs: string[]): NoteSource {
  return {
    part: async (part) => unpackNoteTexts((await db.meta.get(`${NOTE_TEXTS_KEY}${part}`))?.value, saveId, slugs, part),
    rows: () => db.observations.toArray(),
    async some(wanted) {
      return (await db.observations.bulkGet(wanted)).filter((o): o is Observation => o !== undefined)
    },
  }
}

export interface OpenRead {
  version: number
  rulesMatch: boolean
  graphRow: unknown
  entityIndex: SavedIndex | undefined
  noteIndex: SavedIndex | undefined
  /** An import that has not committed (see store/import-pieces). */
  importPending: ImportPending | undefined
  /** Whether some note ever stored carries world time (see store/commit `VALIDITY_KEY`). */
  hasValidity: boolean
  singleValued: SingleValuedSetting | undefined
  aliases: Alias[]
  proposals: MergeProposal[]
  files: AppendixFile[]
  connections: ConnectionRecord[]
}

/** What open reads, in one transaction, but for the observation rows. */
export function readForOpen(db: MemoryDB): Promise<OpenRead> {
  return db.transaction('r', [db.aliases, db.proposals, db.files, db.connections, db.meta], async () => {
      const [aliases, proposals, files, connections, meta] = await Promise.all([
        db.aliases.toArray(), db.proposals.toArray(), db.files.toArray(), db.connections.toArray(),
        db.meta.bulkGet([INDEX_SNAPSHOT_KEY, NOTE_INDEX_SNAPSHOT_KEY, VERSION_KEY, DERIVATION_KEY, GRAPH_SNAPSHOT_KEY, IMPORT_PENDING_KEY, VALIDITY_KEY, SINGLE_VALUED_META_KEY]),
      ])
      const [entityIndex, noteIndex, versionRow, rulesRow, graphRow, pendingRow, validityRow, singleValuedRow] = meta
      return {
        version: typeof versionRow?.value === 'number' ? versionRow.value : 0,
        rulesMatch: rulesRow?.value === DERIVATION_RULES,
        graphRow: graphRow?.value,
        entityIndex: entityIndex?.value as SavedIndex | undefined,
        noteIndex: noteIndex?.value as SavedIndex | undefined,
        importPending: pendingRow?.value as ImportPending | undefined,
        hasValidity: validityRow?.value === true,
        singleValued: singleValuedRow?.value as SingleValuedSetting | undefined,
        aliases, proposals, files, connections,
      }
    })
}

/** The observation rows, with the aliases, version and saved state they go with. */
export function readObservations(db: MemoryDB): Promise<Pick<OpenRead, 'version' | 'rulesMatch' | 'graphRow' | 'aliases'> & { observations: Observation[] }> {
  return db.transaction('r', [db.observations, db.aliases, db.meta], async () => {
    const [observations, aliases, meta] = await Promise.all([db.observations.toArray(), db.aliases.toArray(), db.meta.bulkGet([VERSION_KEY, DERIVATION_KEY, GRAPH_SNAPSHOT_KEY])])
    const [versionRow, rulesRow, graphRow] = meta
    return { observations, aliases, version: typeof versionRow?.value === 'number' ? versionRow.value : 0, rulesMatch: rulesRow?.value === DERIVATION_RULES, graphRow: graphRow?.value }
  })
}

