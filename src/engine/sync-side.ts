// The committer's side that faces other copies of the memory: changes from other devices and
// tabs (`SyncPort`), imports, and what a sync document is seeded and reconciled from.
import { collapseAliases } from '../core/consolidate'
import { Graph, type GraphDelta } from '../core/graph'
import { sameJson } from '../core/same-json'
import type { Alias, AppendixFile, MergeProposal, Observation } from '../core/types'
import { saveExtras, saveMeta, SINGLE_VALUED_META_KEY, dropMirrored } from '../store/commit'
import type { JournalRow } from '../store/db'
import type { SingleValuedSetting } from '../sync/layout'
import { ALIASES_JOURNAL_KEY, observationJournalKey, type RejectedPair, type RemoteChange } from '../sync/port'
import { emptyDelta, type Committer } from './committer'
import { sha256Hex } from './tokens'

export interface ImportedSnapshot {
  observations: Observation[]
  aliases: Alias[]
  rejected?: RejectedPair[]
}

export class SyncSide {
  constructor(private readonly c: Committer) {}

  /**
   * Loads a memory's content written elsewhere (a backup, a migration) as one commit, written in
   * pieces (store/import-pieces):
   * observations keeping their slugs, aliases, and pairs already rejected, so consolidation does
   * not propose them again. Each observation must already satisfy the write contract.
   */
  importSnapshot(snapshot: ImportedSnapshot): Promise<number> {
    const { observations, aliases } = snapshot
    return this.c.enqueue(async () => {
      const { graph } = this.c
      const fresh = observations.filter((o) => !graph.getObservation(o.slug))
      const next = Graph.derive([...graph.allObservations(), ...fresh], new Map([...graph.aliasMap(), ...aliases.map((a) => [a.variant, a.canonical] as const)]))
      const rejected = (snapshot.rejected ?? []).filter((r) => this.c.proposals.get(r.id)?.status !== 'rejected')
      const proposals = rejected.map((r) => this.rejectedProposal(r))
      const notesJournal = fresh.map((o) => this.c.journalRow(observationJournalKey(o.slug)))
      const aliasesJournal = aliases.length ? [this.c.journalRow(ALIASES_JOURNAL_KEY)] : []
      const journal = [...notesJournal, ...aliasesJournal]
      // derived once, above: the live graph takes it over rather than applying each note again
      await this.c.commitImport(next, { fresh, aliases, proposals, notesJournal, aliasesJournal }, (now) => {
        const at = this.c.clock()
        return {
          observations: { put: fresh },
          aliases: [...now.aliasMap()].map(([variant, canonical]) => ({ variant, canonical, createdAt: at })),
          ...(rejected.length ? { rejected } : {}),
          journal,
        }
      })
      return fresh.length
    })
  }

  /** A rejected pair as a proposal: the one already known, or a record of the rejection alone. */
  private rejectedProposal(r: RejectedPair): MergeProposal {
    const known = this.c.proposals.get(r.id)
    return known ? { ...known, status: 'rejected' } : { id: r.id, kind: 'merge', pair: r.pair, names: [...r.pair], canonical: r.pair[0], score: 0, evidence: [], status: 'rejected', createdAt: r.at || this.c.clock() }
  }

  /**
   * Applies observations and aliases that another device wrote, in one transaction, and
   * re-derives only what they touch. Nothing is re-validated against the write contract:
   * the sync layer has checked each value, and derivation tolerates dangling edges.
   */
  applyRemote(incoming: RemoteChange): Promise<GraphDelta> {
    // merges made on two devices at once can meet as chains or loops (A into B here, B into A
    // there): every device settles them the same way, flat, a loop merged into its least key
    const change: RemoteChange = incoming.aliases ? { ...incoming, aliases: collapseAliases(incoming.aliases) } : incoming
    return this.c.enqueue(async () => {
      const { graph } = this.c
      if (await this.applyRemoteExtras(change)) this.c.changed()
      if (!change.put.length && !change.deleted.length && !change.aliases) return emptyDelta()
      const previewed = graph.previewChanges({ put: change.put, deleted: change.deleted, aliases: change.aliases })
      // the notes the change itself puts or removes; an alias change re-files others unchanged
      const named = new Set([...change.put.map((o) => o.slug), ...change.deleted])
      const changed = [...previewed.observations].filter(([slug]) => named.has(slug))
      const put = changed.map(([, o]) => o).filter((o): o is Observation => o !== undefined)
      const deleted = changed.filter(([, o]) => o === undefined).map(([slug]) => slug)
      if (!changed.length && !change.aliases) {
        graph.discardPreviewedChanges(previewed)
        return emptyDelta()
      }
      const now = this.c.clock()
      return this.c.commitPreviewed(previewed, {
        observations: { put, delete: deleted },
        ...(change.aliases ? { aliases: [...change.aliases].map(([variant, canonical]) => ({ variant, canonical, createdAt: now })) } : {}),
        settled: [...changed.map(([slug]) => observationJournalKey(slug)), ...(change.aliases ? [ALIASES_JOURNAL_KEY] : [])],
      }, { put, deleted })
    })
  }

  /** Files, rejected pairs and settings from another device: they touch no derived state. True when any was new. */
  private async applyRemoteExtras(change: RemoteChange): Promise<boolean> {
    let settled = false
    if (change.singleValued && !sameJson(change.singleValued, this.c.singleValued)) {
      const setting = change.singleValued
      await saveMeta(this.c.db, SINGLE_VALUED_META_KEY, setting)
      this.c.singleValued = setting
      settled = true
    }
    const offered = (change.files ?? []).filter(({ file }) => this.c.files.get(file.path)?.sha256 !== file.sha256)
    // a file is stored only with the bytes its entry describes; a peer's mismatch waits for the right bytes
    const hashes = await Promise.all(offered.map(({ bytes }) => sha256Hex(bytes)))
    const files = offered.filter(({ file, bytes }, i) => bytes.byteLength === file.size && hashes[i] === file.sha256)
    const rejected = (change.rejected ?? []).filter((r) => this.c.proposals.get(r.id)?.status !== 'rejected')
    if (!files.length && !rejected.length) return settled
    const proposals = rejected.map((r) => this.rejectedProposal(r))
    await saveExtras(this.c.db, files, proposals)
    for (const { file } of files) this.c.files.set(file.path, file)
    for (const p of proposals) this.c.proposals.set(p.id, p)
    return true
  }

  /** Local commits whose document update may not be saved yet (see `JournalRow`). */
  async journalRows(): Promise<JournalRow[]> {
    return this.c.db.unmirrored.toArray()
  }

  /** Drops journal rows whose document update is now saved, unless a later commit rewrote them. */
  markMirrored(rows: readonly JournalRow[]): Promise<void> {
    return dropMirrored(this.c.db, rows)
  }

  /** Every observation and the alias map, for reconciling with a sync document (after `notesHeld`). */
  snapshotState(): { observations: Iterable<Observation>; aliases: Map<string, string> } {
    return { observations: this.c.graph.allObservations(), aliases: new Map(this.c.graph.aliasMap()) }
  }

  /** Appendix files with their bytes, and rejected pairs, for seeding a sync document. */
  async extrasState(): Promise<{ files: Array<{ file: AppendixFile; bytes: Uint8Array }>; rejected: RejectedPair[]; singleValued?: SingleValuedSetting }> {
    const rows = await this.c.db.fileBytes.bulkGet([...this.c.files.keys()])
    const files = [...this.c.files.values()].map((file, i) => ({ file, bytes: rows[i]?.data })).filter((f): f is { file: AppendixFile; bytes: Uint8Array } => f.bytes !== undefined)
    const rejected = [...this.c.proposals.values()].filter((p) => p.status === 'rejected').map((p) => ({ id: p.id, pair: p.pair, at: p.createdAt }))
    return { files, rejected, ...(this.c.singleValued ? { singleValued: this.c.singleValued } : {}) }
  }
}
