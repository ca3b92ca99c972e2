// What an agent holds: every call goes through its connection's tier, checked at call time.
import { requireTier, type Operation } from '../core/access'
import { MemoryError } from '../core/errors'
import type {
  AppendixFile, ConnectionRecord, DeleteResult, EntityDetail, MergeProposal, Observation, ObservationInput, ObservationPatch, RecallRequest, RecallResult, Tier, UpdateResult, WriteResult,
} from '../core/types'
import type { GraphSlice, GraphSliceOptions } from '../core/graph-slice'
import { listNotes, noteSearchText, NOTE_SEARCH_MAX, vocabularyOf, type NotePage, type NoteListRequest, type Vocabulary } from '../core/notes'
import type { FileInput } from './files'
import type { MemoryEngine } from './memory-engine'

export type StoreFileInput = Omit<FileInput, 'data' | 'filename' | 'type' | 'description'> & {
  data: Uint8Array | ArrayBuffer | Blob | string
  filename?: string
  type?: string
  description?: string
}

export class Connection {
  /** @internal made by `Memory.connect` and `connectWithToken` only */
  constructor(
    private readonly engine: MemoryEngine,
    private readonly record: () => ConnectionRecord,
    /** Present only on the handle `connect` returned: show it once, then it is gone. */
    readonly token: string | undefined,
    /** Told of every permitted call, so the memory can say when the connection was last used. */
    private readonly onUse: (connectionId: string) => void = () => undefined,
  ) {}

  get id(): string {
    return this.record().id
  }
  get agent(): string {
    return this.record().agent
  }
  get tier(): Tier {
    return this.record().tier
  }
  get memoryId(): string {
    return this.engine.info.id
  }

  private check(op: Operation): string {
    const c = this.record()
    if (c.revokedAt) throw new MemoryError('revoked', `connection ${c.id} (${c.agent}) was revoked; ask for a new connection`, { connection: c.id })
    requireTier(c.tier, op)
    this.onUse(c.id)
    return c.id
  }

  async write(input: ObservationInput): Promise<WriteResult> {
    return this.engine.write(input, this.check('write'))
  }
  async update(slug: string, patch: ObservationPatch): Promise<UpdateResult> {
    this.check('update')
    return this.engine.update(slug, patch)
  }
  async delete(slug: string): Promise<DeleteResult> {
    this.check('delete')
    return this.engine.delete(slug)
  }
  async recall(request: RecallRequest = {}): Promise<RecallResult> {
    this.check('recall')
    return this.engine.recall(request)
  }
  async getObservation(slug: string): Promise<Observation> {
    this.check('getObservation')
    return this.engine.withNotes(() => this.engine.getObservation(slug), () => (typeof slug === 'string' ? [slug] : []))
  }
  async inspect(entityName: string): Promise<EntityDetail> {
    this.check('inspect')
    // its history needs the notes' world time
    await this.engine.timelineReady()
    return this.engine.withNotes(() => this.engine.inspect(entityName), () => this.engine.notesOfName(entityName))
  }
  /** Read tier, like inspect: it shows only what inspect would, bounded. */
  async graphSlice(opts: GraphSliceOptions = {}): Promise<GraphSlice> {
    this.check('inspect')
    return this.engine.graphSlice(opts)
  }
  /** Read tier, like recall: every observation page by page, for browsing notes. */
  async listObservations(request: NoteListRequest = {}): Promise<NotePage> {
    this.check('recall')
    await this.engine.notesHeld()
    const text = noteSearchText(request)
    const found = text === undefined ? undefined : await this.engine.findNotes(text, NOTE_SEARCH_MAX)
    return listNotes(this.engine.committedGraph, request, found)
  }
  /** Read tier, like inspect: every entity name, alias and relationship type, for linking a note. */
  async vocabulary(): Promise<Vocabulary> {
    this.check('inspect')
    return vocabularyOf(this.engine.committedGraph)
  }
  async storeFile(input: StoreFileInput): Promise<AppendixFile> {
    return this.engine.storeFile(input, this.check('storeFile'))
  }
  async listFiles(): Promise<AppendixFile[]> {
    this.check('listFiles')
    return this.engine.listFiles()
  }
  async readFile(path: string): Promise<{ file: AppendixFile; data: Uint8Array }> {
    this.check('readFile')
    return this.engine.readFile(path)
  }
  async consolidate(): Promise<MergeProposal[]> {
    this.check('consolidate')
    return this.engine.consolidate()
  }
  async listProposals(): Promise<MergeProposal[]> {
    this.check('listProposals')
    return this.engine.listProposals()
  }
  async acceptProposal(id: string, options: { canonical?: string } = {}): Promise<{ proposal: MergeProposal; canonical: string }> {
    const by = this.check('acceptProposal')
    const { proposal, canonical } = await this.engine.acceptProposal(id, options, this.tier, by)
    return { proposal, canonical }
  }
  /** The relationship types this memory declares single-valued (see `Memory.setSingleValued`). */
  async listSingleValued(): Promise<string[]> {
    this.check('listSingleValued')
    return this.engine.singleValuedTypes()
  }
  /** Full tier: declares the single-valued relationship types, replacing the earlier list; it syncs. */
  async setSingleValued(types: string[]): Promise<string[]> {
    this.check('setSingleValued')
    return this.engine.setSingleValued(types)
  }
  async rejectProposal(id: string): Promise<MergeProposal> {
    this.check('rejectProposal')
    return this.engine.rejectProposal(id)
  }
}
