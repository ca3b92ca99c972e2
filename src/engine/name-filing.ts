// The duplicate check's names: every entity name signed into a `VariantIndex`, kept in step with
// the graph, and after an open filed a slice at a time, the save's name blocks standing in meanwhile.
import { findPossibleDuplicates, VariantIndex } from '../core/consolidate'
import type { Graph, GraphDelta } from '../core/graph'
import type { Entity, PossibleDuplicate } from '../core/types'
import { nameSignature, type NameSignature, type SavedNameBlocks } from '../core/variants'

export class NameFiling {
  /**
   * Kept in step with the graph so a write's possible-duplicate check is a lookup, not a scan.
   * An opened memory's names are filed into it after the open (`fileInBackground`), since
   * signing 100,000 names costs seconds; the first write that needs it files the rest.
   */
  private readonly variants = new VariantIndex()
  /** Keys of entities whose names are not filed into `variants` yet, from `unnamedAt` on. */
  private unnamed: string[]
  private unnamedAt = 0
  /** Reads the opened save's name blocks, searched for the names not filed into `variants` yet. */
  private savedNames: (() => Promise<SavedNameBlocks | undefined>) | undefined
  private savedNamesRead: Promise<SavedNameBlocks | undefined> | undefined

  constructor(
    private readonly graph: Graph,
    savedNames: (() => Promise<SavedNameBlocks | undefined>) | undefined,
  ) {
    this.unnamed = [...graph.entities.keys()]
    this.savedNames = savedNames
  }

  /** Files up to `count` more entity names into the duplicate check; true once all are. */
  fileSome(count: number): boolean {
    const end = Math.min(this.unnamedAt + count, this.unnamed.length)
    for (; this.unnamedAt < end; this.unnamedAt++) {
      // read now, not at open: a commit since then may have renamed or removed it (and filed it)
      const e = this.graph.entities.get(this.unnamed[this.unnamedAt]!)
      if (e) this.variants.add(e.key, e.name)
    }
    if (this.unnamedAt < this.unnamed.length) return false
    this.unnamed = []
    this.unnamedAt = 0
    this.savedNames = this.savedNamesRead = undefined
    return true
  }

  /**
   * Existing names a write's new names may be variants of. Right after an open, the names not
   * filed yet are found through the save's name blocks instead of being signed first.
   */
  async possibleDuplicates(newNames: string[]): Promise<PossibleDuplicate[]> {
    if (!newNames.length) return []
    if (this.unnamed.length && this.savedNames) {
      // a save without its blocks (or one unreadable) leaves the names to be signed
      this.savedNamesRead ??= this.savedNames().catch(() => undefined)
      const blocks = await this.savedNamesRead
      if (blocks && this.unnamed.length) return findPossibleDuplicates(newNames, this.variants, { blocks, nameOf: (key) => this.graph.entities.get(key)?.name })
    }
    this.fileSome(Infinity)
    return findPossibleDuplicates(newNames, this.variants)
  }

  /** An entity's name signature for a save: the one filed when it is of the current name. */
  signatureOf(e: Entity): NameSignature {
    const known = this.variants.signature(e.key)
    return known?.name === e.name ? known : nameSignature(e.name)
  }

  /** Keeps the filed names in step with a committed change. */
  take(delta: GraphDelta): void {
    for (const k of delta.removedEntities) this.variants.remove(k)
    for (const e of delta.upsertedEntities) this.variants.add(e.key, e.name)
  }
}
