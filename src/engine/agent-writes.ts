// What agents and the owner change: notes, files, proposals and settings, each checked here and
// handed to the committer.
import { checkEndpoints, validateObservationInput, validatePatch } from '../core/contract'
import { applyMergeToAliases, namesMayMerge, proposeMerges } from '../core/consolidate'
import { applyPatch, reviewHints } from '../core/edit'
import { MemoryError } from '../core/errors'
import type { GraphDelta } from '../core/graph'
import { neighborhoodsOf } from '../core/neighborhood'
import { makeSlug } from '../core/slug'
import { parseSingleValued, proposeSupersessions, supersessionNote } from '../core/supersede'
import type { Alias, AppendixFile, DeleteResult, MergeProposal, Observation, Tier, UpdateResult, WriteResult, WriteWarning } from '../core/types'
import { checkSupersedes, TimeView } from '../core/validity'
import { replaceProposals, saveFile, saveMeta, saveProposal, SINGLE_VALUED_META_KEY, type Through } from '../store/commit'
import type { SingleValuedSetting } from '../sync/layout'
import { ALIASES_JOURNAL_KEY } from '../sync/port'
import { describe, emptyDelta, type Committer } from './committer'
import { validateFileInput } from './files'
import { randomId, sha256Hex } from './tokens'

/** What a write that names no entity is told: it is found, but only by its own words. */
const NO_ENTITY_WARNING: WriteWarning = {
  code: 'no_entity',
  message: 'This note names no entity: recall finds it by its own words alone. Name the people, places, projects or things it is about (entities, with relationships) to link it into the graph, so that recalling them brings it back too.',
}

export type Accepted = { proposal: MergeProposal; canonical: string; delta: GraphDelta }

/**
 * Each change takes `through`, the connection it comes through (none for the owner's own calls):
 * it is stored only while that connection is live in storage (see store/commit `Through`).
 */
export class AgentWrites {
  constructor(private readonly c: Committer) {}

  write(input: unknown, createdBy: string, through?: Through): Promise<WriteResult> {
    return this.c.enqueue(() => this.writeNow(input, createdBy, through), 'one note')
  }

  /** A write, in the queue. */
  private async writeNow(input: unknown, createdBy: string, through: Through): Promise<WriteResult> {
    const { graph, loader } = this.c
    const valid = validateObservationInput(input, (name) => graph.entities.has(graph.resolveName(name)))
    checkEndpoints(valid.entities, valid.relationships, (k) => graph.resolve(k), (k) => graph.entities.has(k), 'write')
    checkSupersedes(undefined, valid.supersedes, (s) => graph.hasObservation(s), 'write')
    // the timeline reads the notes a note supersedes
    await loader.readSome(graph.notesInStorageAmong(valid.supersedes ?? []))
    const now = this.c.clock()
    const slug = makeSlug(valid.title, (s) => graph.hasObservation(s), () => randomId(6))
    const { warnings: w, ...fields } = valid
    const observation: Observation = { slug, ...fields, observedAt: fields.observedAt ?? now, createdBy, createdAt: now, updatedAt: now }
    const warnings: WriteWarning[] = [...w, ...this.unknownFileWarnings(observation.files)]
    if (!observation.entities.length) warnings.push(NO_ENTITY_WARNING)
    const newNames = valid.entities.map((e) => e.name).filter((n) => !graph.entities.has(graph.resolveName(n)))
    const possibleDuplicates = await this.c.names.possibleDuplicates(newNames)
    await this.c.commitObservation(slug, observation, undefined, through)
    return { slug, warnings, neighborhoods: neighborhoodsOf(graph, observation), possibleDuplicates }
  }

  update(slug: unknown, patchInput: unknown, through?: Through): Promise<UpdateResult> {
    return this.c.enqueue(async () => {
      const { graph } = this.c
      const current = await this.requireHeldObservation(slug)
      const patch = validatePatch(patchInput)
      checkSupersedes(current.slug, patch.validity.supersedes, (s) => graph.hasObservation(s), 'update')
      await this.c.loader.readSome(graph.notesInStorageAmong(patch.validity.supersedes ?? []))
      const { next, warnings } = applyPatch(current, patch, this.c.clock())
      checkEndpoints(next.entities, next.relationships, (k) => graph.resolve(k), (k) => this.entityExistsWithout(k, current.slug), 'update')
      const hints = reviewHints(current, patch, graph)
      if (patch.fields.files) warnings.push(...this.unknownFileWarnings(patch.fields.files))
      await this.c.commitObservation(current.slug, next, undefined, through)
      return { observation: next, warnings, reviewHints: hints, neighborhoods: neighborhoodsOf(graph, next) }
    }, 'one note')
  }

  delete(slug: unknown, through?: Through): Promise<DeleteResult> {
    return this.c.enqueue(async () => {
      const { graph } = this.c
      const current = await this.requireHeldObservation(slug)
      let pruned: DeleteResult['pruned'] = { entities: [], relationships: [] }
      await this.c.commitObservation(current.slug, undefined, (delta) => {
        // named while the graph still holds what is about to go
        pruned = {
          entities: delta.removedEntities.map((k) => graph.entities.get(k)?.name ?? k),
          relationships: delta.removedRelationships.map((k) => graph.relationships.get(k)).filter((r) => r !== undefined).map((r) => graph.present(r)),
        }
      }, through)
      return { slug: current.slug, pruned }
    }, 'one note')
  }

  storeFile(input: unknown, createdBy: string, through?: Through): Promise<AppendixFile> {
    return this.c.enqueue(async () => {
      const file = await validateFileInput(input)
      if (this.c.files.has(file.path)) throw new MemoryError('conflict', `an appendix file already exists at "${file.path}"; choose another path`, { path: file.path })
      const record: AppendixFile = {
        path: file.path,
        filename: file.filename,
        type: file.type,
        size: file.data.byteLength,
        description: file.description,
        createdBy,
        createdAt: this.c.clock(),
        sha256: await sha256Hex(file.data),
      }
      await saveFile(this.c.db, record, file.data, through)
      this.c.files.set(record.path, record)
      this.c.emit({ files: [{ file: record, bytes: file.data }] })
      return record
    })
  }

  consolidate(through?: Through): Promise<MergeProposal[]> {
    return this.c.enqueue(async () => {
      const { graph, proposals } = this.c
      const rejected = new Set([...proposals.values()].filter((p) => p.status === 'rejected').map((p) => p.id))
      const accepted = new Set([...proposals.values()].filter((p) => p.status === 'accepted').map((p) => p.id))
      const found = [...proposeMerges({ entities: graph.entities.values(), relationships: graph.relationships.values(), rejected, now: this.c.clock() }), ...(await this.proposeSupersessions(new Set([...rejected, ...accepted])))]
        .filter((p) => !accepted.has(p.id))
      const stale = [...proposals.values()].filter((p) => p.status === 'open').map((p) => p.id)
      await replaceProposals(this.c.db, stale, found, through)
      for (const [id, p] of proposals) if (p.status === 'open') proposals.delete(id)
      for (const p of found) proposals.set(p.id, p)
      return found
    })
  }

  /**
   * `tier` is the accepting connection's: below `full`, only a merge the names alone justify. A
   * supersession is accepted by writing a note (as `createdBy`), which `read_write` may.
   */
  acceptProposal(id: unknown, options: unknown = {}, tier: Tier = 'full', createdBy = 'owner', through?: Through): Promise<Accepted> {
    return this.c.enqueue(async () => {
      const { graph } = this.c
      const proposal = this.requireOpenProposal(id)
      if (proposal.kind === 'supersede') return this.acceptSupersession(proposal, createdBy, through)
      if (tier !== 'full' && !namesMayMerge(proposal.names[0], proposal.names[1])) {
        throw new MemoryError(
          'forbidden',
          `merging ${JSON.stringify(proposal.names[0])} and ${JSON.stringify(proposal.names[1])} rests on more than their names (descriptions or shared neighbors); accepting it needs a full connection`,
          { id: proposal.id, names: proposal.names, needed: 'full', held: tier },
        )
      }
      const opts = (options ?? {}) as { canonical?: unknown }
      let canonical = proposal.canonical
      if (opts.canonical !== undefined) {
        const wanted = typeof opts.canonical === 'string' ? graph.resolveName(opts.canonical) : ''
        if (!proposal.pair.includes(wanted)) {
          throw new MemoryError('invalid_request', `canonical must be one of the proposal's names: ${proposal.names.join(' or ')}`, { id: proposal.id, names: proposal.names })
        }
        canonical = wanted
      }
      const variant = proposal.pair[0] === canonical ? proposal.pair[1] : proposal.pair[0]
      const aliases = applyMergeToAliases(new Map(graph.aliasMap()), variant, canonical)
      const accepted: MergeProposal = { ...proposal, canonical, status: 'accepted' }
      const previewed = graph.previewChanges({ aliases })
      const now = this.c.clock()
      const rows: Alias[] = [...aliases].map(([v, c]) => ({ variant: v, canonical: c, createdAt: now }))
      const journal = [this.c.journalRow(ALIASES_JOURNAL_KEY)]
      const delta = await this.c.commitPreviewed(previewed, { aliases: rows, proposals: [accepted], journal, through }, undefined, { aliases: rows, journal })
      this.c.proposals.set(accepted.id, accepted)
      return { proposal: accepted, canonical: graph.entities.get(canonical)?.name ?? canonical, delta }
    })
  }

  /** The relationship types this memory declares single-valued (stored form, sorted). */
  singleValuedTypes(): string[] {
    return [...(this.c.singleValued?.types ?? [])]
  }

  /** Declares which relationship types hold one target at a time; replaces the earlier list, and syncs. */
  setSingleValued(types: unknown, through?: Through): Promise<string[]> {
    return this.c.enqueue(async () => {
      const setting: SingleValuedSetting = { types: parseSingleValued(types), at: this.c.clock() }
      await saveMeta(this.c.db, SINGLE_VALUED_META_KEY, setting, through)
      this.c.singleValued = setting
      this.c.emit({ singleValued: setting })
      return [...setting.types]
    })
  }

  rejectProposal(id: unknown, through?: Through): Promise<MergeProposal> {
    return this.c.enqueue(async () => {
      const rejected: MergeProposal = { ...this.requireOpenProposal(id), status: 'rejected' }
      await saveProposal(this.c.db, rejected, through)
      this.c.proposals.set(rejected.id, rejected)
      this.c.emit({ rejected: [{ id: rejected.id, pair: rejected.pair, at: this.c.clock() }] })
      return rejected
    })
  }

  /** Supersession proposals for the single-valued types: edges and notes as they hold now. */
  private async proposeSupersessions(decided: ReadonlySet<string>): Promise<MergeProposal[]> {
    const types = new Set(this.c.singleValued?.types ?? [])
    if (!types.size) return []
    const { graph } = this.c
    const timeline = await this.c.timelineReady()
    const now = this.c.clock()
    const view = new TimeView(timeline, graph, { history: 'current' }, now)
    return proposeSupersessions({
      relationships: graph.relationships.values(),
      singleValued: types,
      noteTime: (slug) => ({ start: timeline.interval(slug)?.start ?? Date.parse(graph.observedAtOf(slug) ?? now), current: view.valid(slug) }),
      edgeCurrent: (r) => view.edge(r),
      nameOf: (key) => graph.entities.get(key)?.name ?? key,
      decided,
      now,
    })
  }

  /** Accepts a supersession: writes the note that supersedes the older one (see core/supersede). */
  private async acceptSupersession(proposal: MergeProposal, createdBy: string, through: Through): Promise<Accepted> {
    const detail = proposal.supersede
    if (!detail || !this.c.graph.hasObservation(detail.older) || !this.c.graph.hasObservation(detail.newer)) {
      throw new MemoryError('conflict', `proposal "${proposal.id}" names a note that is gone; run consolidate again`, { id: proposal.id })
    }
    const written = await this.writeNow(supersessionNote({ ...proposal, supersede: detail }), createdBy, through)
    const accepted: MergeProposal = { ...proposal, status: 'accepted' }
    await saveProposal(this.c.db, accepted, through)
    this.c.proposals.set(accepted.id, accepted)
    return { proposal: accepted, canonical: written.slug, delta: emptyDelta() }
  }

  /** An observation by slug, read from storage if the open left it there. */
  private async requireHeldObservation(slug: unknown): Promise<Observation> {
    if (typeof slug === 'string') await this.c.loader.readSome(this.c.graph.notesInStorageAmong([slug]))
    return this.c.requireObservation(slug)
  }

  private requireOpenProposal(id: unknown): MergeProposal {
    const p = typeof id === 'string' ? this.c.proposals.get(id) : undefined
    if (!p) throw new MemoryError('not_found', `no proposal ${describe(id)}; run consolidate to get current proposals`, { id: describe(id) })
    if (p.status !== 'open') throw new MemoryError('conflict', `proposal "${p.id}" was already ${p.status}`, { id: p.id, status: p.status })
    return p
  }

  /** Whether an entity would still exist if observation `slug` did not describe it. */
  private entityExistsWithout(key: string, slug: string): boolean {
    const e = this.c.graph.entities.get(key)
    return e !== undefined && e.observations.some((s) => s !== slug)
  }

  private unknownFileWarnings(paths: string[]): Array<{ code: 'unknown_file'; message: string }> {
    return paths.filter((p) => !this.c.files.has(p)).map((p) => ({ code: 'unknown_file' as const, message: `no appendix file at "${p}" yet; store it with storeFile` }))
  }
}
