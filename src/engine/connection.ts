// What an agent holds: every call goes through its connection's tier, checked at call time, and
// is answered only while storage holds the connection live (so a revoke made by another instance
// of the memory holds here at once: changes check it in their transaction, reads alongside).
import { requireLiveConnection, requireTier, type Operation } from '../core/access'
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
    /** Reads the connection from storage and refuses it there if revoked (another instance may have). */
    private readonly confirmLive: (connectionId: string) => Promise<void> = async () => undefined,
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

  /** The tier and what this instance knows of a revoke, at once; returns the connection's id. */
  private check(op: Operation): string {
    const c = this.record()
    requireLiveConnection(c.id, c)
    requireTier(c.tier, op)
    this.onUse(c.id)
    return c.id
  }

  /** A read, answered only if storage still holds the connection live; both run at once, so it waits for nothing. */
  private async read<T>(op: Operation, answer: () => T | Promise<T>): Promise<T> {
    const id = this.check(op)
    const [result] = await Promise.all([answer(), this.confirmLive(id)])
    return result
  }

  // every change passes the connection's id as `through`: its transaction refuses a revoked one
  async write(input: ObservationInput): Promise<WriteResult> {
    const id = this.check('write')
    return this.engine.write(input, id, id)
  }
  async update(slug: string, patch: ObservationPatch): Promise<UpdateResult> {
    return this.engine.update(slug, patch, this.check('update'))
  }
  async delete(slug: string): Promise<DeleteResult> {
    return this.engine.delete(slug, this.check('delete'))
  }
  async recall(request: RecallRequest = {}): Promise<RecallResult> {
    return this.read('recall', () => this.engine.recall(request))
  }
  async getObservation(slug: string): Promise<Observation> {
    return this.read('getObservation', () => this.engine.withNotes(() => this.engine.getObservation(slug), () => (typeof slug === 'string' ? [slug] : [])))
  }
  async inspect(entityName: string): Promise<EntityDetail> {
    return this.read('inspect', async () => {
      // its history needs the notes' world time
      await this.engine.timelineReady()
      return this.engine.withNotes(() => this.engine.inspect(entityName), () => this.engine.notesOfName(entityName))
    })
  }
  /** Read tier, like inspect: it shows only what inspect would, bounded. */
  async graphSlice(opts: GraphSliceOptions = {}): Promise<GraphSlice> {
    return this.read('inspect', () => this.engine.graphSlice(opts))
  }
  /** Read tier, like recall: every observation page by page, for browsing notes. */
  async listObservations(request: NoteListRequest = {}): Promise<NotePage> {
    return this.read('recall', async () => {
      await this.engine.notesHeld()
      const text = noteSearchText(request)
      const found = text === undefined ? undefined : await this.engine.findNotes(text, NOTE_SEARCH_MAX)
      return listNotes(this.engine.committedGraph, request, found)
    })
  }
  /** Read tier, like inspect: every entity name, alias and relationship type, for linking a note. */
  async vocabulary(): Promise<Vocabulary> {
    return this.read('inspect', () => vocabularyOf(this.engine.committedGraph))
  }
  async storeFile(input: StoreFileInput): Promise<AppendixFile> {
    const id = this.check('storeFile')
    return this.engine.storeFile(input, id, id)
  }
  async listFiles(): Promise<AppendixFile[]> {
    return this.read('listFiles', () => this.engine.listFiles())
  }
  async readFile(path: string): Promise<{ file: AppendixFile; data: Uint8Array }> {
    return this.read('readFile', () => this.engine.readFile(path))
  }
  async consolidate(): Promise<MergeProposal[]> {
    return this.engine.consolidate(this.check('consolidate'))
  }
  async listProposals(): Promise<MergeProposal[]> {
    return this.read('listProposals', () => this.engine.listProposals())
  }
  async acceptProposal(id: string, options: { canonical?: string } = {}): Promise<{ proposal: MergeProposal; canonical: string }> {
    const by = this.check('acceptProposal')
    const { proposal, canonical } = await this.engine.acceptProposal(id, options, this.tier, by, by)
    return { proposal, canonical }
  }
  /** The relationship types this memory declares single-valued (see `Memory.setSingleValued`). */
  async listSingleValued(): Promise<string[]> {
    return this.read('listSingleValued', () => this.engine.singleValuedTypes())
  }
  /** Full tier: declares the single-valued relationship types, replacing the earlier list; it syncs. */
  async setSingleValued(types: string[]): Promise<string[]> {
    return this.engine.setSingleValued(types, this.check('setSingleValued'))
  }
  async rejectProposal(id: string): Promise<MergeProposal> {
    return this.engine.rejectProposal(id, this.check('rejectProposal'))
  }
}
