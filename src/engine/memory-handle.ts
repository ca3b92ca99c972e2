// Creating and opening memories: the retrieval config is frozen at creation and checked at every open.
import { MemoryError } from '../core/errors'
import { DERIVATION_RULES, Graph, type GraphView } from '../core/graph'
import { BM25_ONLY, type Alias, type AppendixFile, type ConnectionInfo, type ConnectionRecord, type Entity, type EntityDetail, type MemoryInfo, type MergeProposal, type Observation, type RetrievalConfig, type Tier, type Visibility } from '../core/types'
import { DEFAULT_TIER, isTier } from '../core/access'
import { MemoryDB, RegistryDB } from '../store/db'
import type { IndexedDBFactory } from '../store/indexeddb-factory'
import { DERIVATION_KEY, IMPORT_PENDING_KEY, importUnderway, rollBackImport, writeDerivedInPieces, type ImportPending } from '../store/import-pieces'
import { storageError, stored } from '../store/storage-error'
import type { Embedder } from '../search/embedder'
import { rememberRecentTexts } from '../search/recent-texts'
import { createEntityIndex, restoreEntityIndex, type EntityDoc, type EntityIndex } from '../search/entity-index'
import { createNoteIndex, restoreNoteIndex, type NoteIndex } from '../search/note-index'
import { entityDoc, GRAPH_SNAPSHOT_KEY, INDEX_SNAPSHOT_KEY, MemoryEngine, NAME_BLOCKS_KEY, NOTE_INDEX_SNAPSHOT_KEY, NOTE_TEXTS_KEY, noteDoc, readNotesInto, SINGLE_VALUED_META_KEY, VERSION_KEY, type NoteSource } from './memory-engine'
import { VALIDITY_KEY } from '../store/commit'
import type { SingleValuedSetting } from '../sync/layout'
import { unpackIndex, unpackNameBlocks, unpackNoteTexts, unpackOpenState, type SavedIndex } from '../store/open-state'
import type { SavedNameBlocks } from '../core/variants'
import { NoteInStorage, type NoteShelf } from '../core/note-shelf'
import { Connection } from './connection'
import { registerEngine } from './engine-door'
import { MemorySync, type SyncOptions } from '../sync/memory-sync'
import type { RemoteChange } from '../sync/port'
import { revocationChannel, type RevocationChannel } from './revocations'
import { shareConnectionsThrough, type ConnectionSharing } from './connection-sharing'
import { shareVisibilityThrough, type VisibilitySharing } from './visibility-sharing'
import { checkVisibilityChange, storeVisibility, VISIBILITY_PENDING_KEY } from './memory-admin'
import { isMemoryId, ORG_ID } from '../core/identifiers'
import { constantTimeEqual, randomId, randomToken, sha256Hex } from './tokens'

export { BM25_ONLY } from '../core/types'

export interface CreateMemoryOptions extends IndexedDBFactory {
  name: string
  visibility?: Visibility
  orgId?: string
  retrieval?: Partial<RetrievalConfig>
  /** The model that the retrieval config names; without one, recall ranks by BM25 alone. */
  embedder?: Embedder
  /**
   * The id of a memory that already exists on another device, to make this device's copy of
   * it (then `sync` fills it from the server). New memories get a fresh id.
   */
  id?: string
}

export interface OpenMemoryOptions extends IndexedDBFactory {
  embedder?: Embedder
}

const DEFAULT_SNIPPET = 280
const LAST_USED_STEP_MS = 60_000

function retrievalConfig(partial: Partial<RetrievalConfig> | undefined, given: Embedder | undefined): RetrievalConfig {
  if (partial?.embedder && partial.embedder !== BM25_ONLY && (!given || given.id !== partial.embedder)) {
    throw new MemoryError('invalid_request', `retrieval.embedder "${partial.embedder}" needs that embedder passed as options.embedder`)
  }
  // an explicit BM25-only config wins over an embedder passed along (a joined memory keeps its config)
  const embedder = partial?.embedder === BM25_ONLY ? undefined : given
  // 0.4 tuned on the WordNet dev split (npm run eval)
  const vector = embedder ? (partial?.weights?.vector ?? 0.4) : 0
  const snippetLength = partial?.snippetLength ?? DEFAULT_SNIPPET
  if (!Number.isInteger(snippetLength) || snippetLength < 40 || snippetLength > 2_000) {
    throw new MemoryError('invalid_request', 'retrieval.snippetLength must be a whole number from 40 to 2000')
  }
  if (!(vector >= 0 && vector <= 1)) throw new MemoryError('invalid_request', 'retrieval.weights.vector must be from 0 to 1')
  return {
    embedder: embedder?.id ?? BM25_ONLY,
    modelChecksum: embedder?.checksum ?? '',
    dimensions: embedder?.dimensions ?? 0,
    weights: { text: 1 - vector, vector },
    snippetLength,
  }
}

export class Memory {
  private syncing: Promise<MemorySync> | undefined

  private readonly revocations: RevocationChannel
  /** Present while the memory keeps a sync document: its connections travel in it. */
  private visibilitySharing: VisibilitySharing | undefined
  private sharing: ConnectionSharing | undefined

  private constructor(
    private readonly engine: MemoryEngine,
    private connections: Map<string, ConnectionRecord>,
  ) {
    registerEngine(this, engine)
    // the database has the last word: a message on the channel is only a hint to look
    this.revocations = revocationChannel(engine.info.id, (id) => {
      if (!this.connections.get(id) || this.connections.get(id)!.revokedAt) return
      void this.engine.db.connections.get(id).then((row) => {
        const c = this.connections.get(id)
        if (c && !c.revokedAt && row?.revokedAt) this.connections.set(id, { ...c, revokedAt: row.revokedAt })
      }, () => undefined)
    })
  }

  /** Takes in connections other instances of this memory created or revoked since it opened. */
  private async refreshConnections(): Promise<void> {
    const rows = await stored(() => this.engine.db.connections.toArray())
    for (const row of rows) {
      const known = this.connections.get(row.id)
      if (!known || (row.revokedAt && !known.revokedAt)) this.connections.set(row.id, row)
    }
  }

  get info(): MemoryInfo {
    return structuredClone(this.engine.info)
  }

  static async create(opts: CreateMemoryOptions): Promise<Memory> {
    if (typeof opts?.name !== 'string' || !opts.name.trim() || opts.name.length > 200) {
      throw new MemoryError('invalid_request', 'a memory needs a name (1 to 200 characters)')
    }
    const visibility = opts.visibility ?? 'private'
    if (visibility !== 'private' && visibility !== 'organization') throw new MemoryError('invalid_request', 'visibility is "private" or "organization"')
    if (visibility === 'organization' && (typeof opts.orgId !== 'string' || !ORG_ID.test(opts.orgId))) {
      throw new MemoryError('invalid_request', 'an organization-visible memory needs an orgId (letters, digits, "-" or "_", up to 128)')
    }
    if (opts.id !== undefined && !isMemoryId(opts.id)) {
      throw new MemoryError('invalid_request', 'a memory id is 1 to 64 lowercase letters, digits and dashes', { id: String(opts.id).slice(0, 80) })
    }
    const info: MemoryInfo = {
      id: opts.id ?? `${Date.now().toString(36)}-${randomId(8)}`,
      name: opts.name.trim(),
      visibility,
      orgId: opts.orgId ?? null,
      createdAt: new Date().toISOString(),
      retrieval: retrievalConfig(opts.retrieval, opts.embedder),
    }
    const registry = new RegistryDB(opts)
    try {
      await registry.memories.add(info)
    } catch (err) {
      if ((err as { name?: string }).name === 'ConstraintError') throw new MemoryError('conflict', `a memory with id "${info.id}" is already on this device; open it instead`, { id: info.id })
      throw storageError(err)
    } finally {
      registry.close()
    }
    const db = new MemoryDB(info.id, opts)
    // A memory made here organization-visible tells its sync document so at its first sync; a
    // copy of a memory that lives elsewhere (`id`) takes its visibility from the document instead.
    const owed = visibility === 'organization' && opts.id === undefined ? [{ key: VISIBILITY_PENDING_KEY, value: true }] : []
    await stored(() => db.meta.bulkPut([{ key: 'info', value: info }, { key: DERIVATION_KEY, value: DERIVATION_RULES }, ...owed]))
    const embedder = queryOnce(opts.embedder)
    const index = await createEntityIndex(indexOptions(info, embedder))
    const notes = await createNoteIndex(noteIndexOptions(info, embedder))
    return new Memory(new MemoryEngine(info, db, new Graph(), index, notes, { proposals: [], files: [], version: 0 }), new Map())
  }

  static async open(id: string, opts: OpenMemoryOptions = {}): Promise<Memory> {
    const clock = stepClock()
    const registry = new RegistryDB(opts)
    const info = await registry.memories.get(id)
    registry.close()
    if (!info) throw new MemoryError('not_found', `no memory with id "${id}"`, { id })
    checkRetrieval(info, opts.embedder)
    const embedder = queryOnce(opts.embedder)
    clock.step('registry')
    const db = new MemoryDB(id, opts)
    await db.open()
    clock.step('database')
    // Observations are the truth. The state saved with the index at the stored version, under
    // this build's rules, is the observations and their derivation: read as it is, it spares
    // reading every observation row and deriving. Otherwise (rules changed, or commits after the
    // save) the rows are read and the graph derived, and rows of other rules are rewritten.
    let read = await readForOpen(db)
    // an import that did not commit is put back, unless another tab is writing it right now:
    // then its notes are left out of what this open reads
    let importing: Set<string> | undefined
    if (read.importPending) {
      if (await importUnderway(id)) importing = new Set(read.importPending.slugs)
      else {
        await stored(() => rollBackImport(db, read.importPending!))
        read = await readForOpen(db)
      }
    }
    let state = read.rulesMatch ? unpackOpenState(read.graphRow, read.version, DERIVATION_RULES) : undefined
    let observations: Iterable<Observation> | NoteShelf | undefined = state?.observations
    if (!observations) {
      // the rows, with what must agree with them read again in their transaction
      const rows = await readObservations(db)
      read = { ...read, ...rows }
      state = read.rulesMatch ? unpackOpenState(read.graphRow, read.version, DERIVATION_RULES) : undefined
      observations = importing ? rows.observations.filter((o) => !importing.has(o.slug)) : rows.observations
    }
    const { version, proposals, files, connections } = read
    const aliasMap = new Map(read.aliases.map((a) => [a.variant, a.canonical]))
    clock.step('read')
    const graph = state ? Graph.fromRows(observations, aliasMap, state.entities, state.relationships, state.noteEntities, state.dormant) : Graph.derive(observations, aliasMap)
    if (!read.rulesMatch && !importing) await repairDerived(db, graph)
    clock.step(state ? 'graph' : 'derive')
    // the notes' texts are left in storage when the state saved them apart: read after the open
    const source = state?.slugs && state.saveId !== undefined ? noteSource(db, state.saveId, state.slugs) : undefined
    // Index snapshots saved in the same write as the open state hold exactly its graph and
    // notes: nothing to bring up to date. Any other (older, or saved by another tab) is checked
    // document by document, and only changed texts are indexed again.
    const savedWith = (row: SavedIndex | undefined) => state?.saveId !== undefined && state.observations !== undefined && row?.saveId === state.saveId && row.version === version
    const snap = read.entityIndex
    // an unreadable snapshot costs a rebuild, never the memory
    const restored = snap ? await Promise.resolve().then(() => restoreEntityIndex(unpackIndex(snap) as never, { ...indexOptions(info, embedder), documents: (key) => entityDocOf(graph, key) })).catch(() => undefined) : undefined
    clock.step('entity index')
    let index: EntityIndex
    const indexCurrent = restored !== undefined && savedWith(snap)
    if (restored && indexCurrent) {
      index = restored
    } else if (restored) {
      const gone = restored.keys().filter((key) => !graph.entities.has(key))
      if (gone.length) await restored.remove(gone)
      await restored.upsert([...graph.entities.values()].map(entityDoc))
      index = restored
    } else {
      index = await createEntityIndex(indexOptions(info, embedder))
      await index.upsert([...graph.entities.values()].map(entityDoc))
    }
    clock.step('entity catch-up')
    const readNotes = async () => void (source && graph.notesInStorage > 0 && (await readNotesInto(graph, source)))
    const notes = await openNoteIndex(read.noteIndex, graph, noteIndexOptions(info, embedder), savedWith(read.noteIndex), clock, readNotes)
    // both indexes and the state as saved together: closing right away has nothing to save again
    const engine = new MemoryEngine(info, db, graph, index, notes.index, { proposals, files, version, hasValidity: read.hasValidity, ...(read.singleValued ? { singleValued: read.singleValued } : {}), ...(indexCurrent && notes.current ? { savedVersion: version } : {}), ...(state?.slugs && state.saveId !== undefined ? { savedNames: nameBlocksOf(db, state.saveId, state.entities) } : {}) })
    if (source) engine.readNotesFrom(source)
    const memory = new Memory(engine, new Map(connections.map((c) => [c.id, c])))
    clock.step('engine')
    engine.openSteps = clock.steps
    engine.fileInBackground()
    return memory
  }

  /**
   * Creates a connection for an agent; the token is returned once and stored only hashed. It
   * travels with the memory (as its hash) once the memory syncs, so the sync server and every
   * replica accept the token too; `localOnly` keeps it on this device (the app's own).
   */
  async connect(opts: { agent: string; tier?: Tier; localOnly?: boolean }): Promise<Connection> {
    if (typeof opts?.agent !== 'string' || !opts.agent.trim() || opts.agent.length > 200) throw new MemoryError('invalid_request', 'connect needs an agent name')
    const tier = opts.tier ?? DEFAULT_TIER
    if (!isTier(tier)) throw new MemoryError('invalid_request', 'tier is "read", "read_write" or "full"', { tier })
    const token = randomToken()
    const record: ConnectionRecord = {
      id: `conn-${randomId(10)}`,
      memoryId: this.engine.info.id,
      agent: opts.agent.trim(),
      tier,
      tokenHash: await sha256Hex(token),
      createdAt: new Date().toISOString(),
      revokedAt: null,
      ...(opts.localOnly === true ? { localOnly: true } : {}),
    }
    await stored(() => this.engine.db.connections.add(record))
    this.connections.set(record.id, record)
    this.sharing?.share([record])
    return new Connection(this.engine, () => this.connections.get(record.id)!, token, this.touch)
  }

  /** Reattaches an agent that kept its token. */
  async connectWithToken(token: string): Promise<Connection> {
    const hash = typeof token === 'string' ? await sha256Hex(token) : ''
    // connections shared by other holders of the memory are taken in first
    await this.sharing?.settled()
    // another tab may have made or revoked this connection: the database has the last word
    await this.refreshConnections()
    for (const c of this.connections.values()) {
      if (constantTimeEqual(c.tokenHash, hash)) {
        if (c.revokedAt) break
        return new Connection(this.engine, () => this.connections.get(c.id)!, undefined, this.touch)
      }
    }
    throw new MemoryError('forbidden', 'this token is unknown or was revoked; ask for a new connection')
  }

  /**
   * Records when a connection was last used, at most once a minute per connection, off the
   * call's path: a lost stamp costs nothing but a slightly older "last used".
   */
  private readonly touch = (connectionId: string): void => {
    const c = this.connections.get(connectionId)
    if (!c) return
    const now = new Date()
    if (c.lastUsedAt && now.getTime() - Date.parse(c.lastUsedAt) < LAST_USED_STEP_MS) return
    const lastUsedAt = now.toISOString()
    this.connections.set(c.id, { ...c, lastUsedAt })
    const write = this.engine.db.connections.update(c.id, { lastUsedAt }).then(() => undefined, () => undefined)
    this.stamping.add(write)
    void write.finally(() => this.stamping.delete(write))
  }
  private readonly stamping = new Set<Promise<void>>()

  /** Adopts connections another holder of the memory made or revoked (from its sync document). */
  private async takeInShared(list: ConnectionRecord[]): Promise<void> {
    const rows = list.map((c) => {
      const known = this.connections.get(c.id)
      // a connection this device already holds keeps its own fields; only the revoke comes in
      return known ? { ...known, revokedAt: c.revokedAt } : c
    })
    await stored(() => this.engine.db.connections.bulkPut(rows))
    for (const row of rows) {
      this.connections.set(row.id, row)
      if (row.revokedAt) this.revocations.announce(row.id)
    }
  }

  listConnections(): ConnectionInfo[] {
    return [...this.connections.values()].map(({ tokenHash: _, ...c }) => c)
  }

  /** Revocation takes effect at once, also on connection handles already in use. */
  async revoke(connectionId: string): Promise<void> {
    if (!this.connections.has(connectionId)) await this.refreshConnections()
    const c = this.connections.get(connectionId)
    if (!c) throw new MemoryError('not_found', `no connection "${connectionId}"`)
    if (c.revokedAt) return
    const revoked = { ...c, revokedAt: new Date().toISOString() }
    await stored(() => this.engine.db.connections.put(revoked))
    this.connections.set(c.id, revoked)
    this.revocations.announce(c.id)
    this.sharing?.share([revoked])
  }

  /** Persists the search index so the next open neither re-embeds nor rebuilds. */
  async saveIndex(): Promise<void> {
    await this.engine.queueSnapshot()
  }

  /**
   * Starts keeping this memory in its sync document (saved locally, shared with other tabs)
   * and, with a server URL and token, syncing it with other devices. Calling it again returns
   * the same sync, connected to the server it names, if any.
   */
  async sync(options: SyncOptions = {}): Promise<MemorySync> {
    if (!this.syncing) {
      // reconciling with the document reads every note
      this.syncing = this.engine.notesHeld().then(() => MemorySync.start(this.engine, options)).then(async (sync) => {
        await this.refreshConnections()
        this.sharing = shareConnectionsThrough(sync.doc, {
          memoryId: this.engine.info.id,
          known: () => this.connections.values(),
          takeIn: (list) => this.takeInShared(list),
        })
        const db = this.engine.db
        this.visibilitySharing = shareVisibilityThrough(sync.doc, {
          info: () => this.engine.info,
          adopt: async (v) => void (await storeVisibility(this.engine, v.visibility, v.orgId, false)),
          pending: async () => (await db.meta.get(VISIBILITY_PENDING_KEY))?.value === true,
          shared: async () => void (await stored(() => db.meta.delete(VISIBILITY_PENDING_KEY))),
        })
        return sync
      })
      this.syncing.catch(() => (this.syncing = undefined))
      return this.syncing
    }
    const sync = await this.syncing
    if (options.serverUrl && options.token) sync.connect({ ...options, serverUrl: options.serverUrl, token: options.token })
    return sync
  }

  /**
   * Declares which relationship types hold one target at a time (`works_at`, `lives_in`),
   * replacing the earlier list: a second current target of such a type from one source makes
   * `consolidate()` propose a supersession. The owner's act; it syncs (a `full` connection's).
   */
  setSingleValued(types: string[]): Promise<string[]> {
    return this.engine.setSingleValued(types)
  }

  /** The relationship types declared single-valued. */
  singleValued(): string[] {
    return this.engine.singleValuedTypes()
  }

  /**
   * Makes the memory organization-visible (every member of `orgId` may then list it and read
   * it) or private again. This is the owner's act: it reaches the sync server only through a
   * `full` sync connection, and the server then closes the sockets of members who may no
   * longer read it. Other devices adopt it from the sync document.
   */
  async setVisibility(visibility: Visibility, orgId?: string): Promise<MemoryInfo> {
    checkVisibilityChange(visibility, orgId)
    const sharing = this.syncing ? await this.syncing.then(() => this.visibilitySharing, () => undefined) : undefined
    await sharing?.settled()
    // Into the sync document first, so the server cuts members off without waiting for this
    // device's storage (the document keeps its own log); without a document, it is owed to it.
    sharing?.share({ visibility, orgId: visibility === 'organization' ? orgId! : null })
    return storeVisibility(this.engine, visibility, orgId, sharing === undefined)
  }

  // ---- for the package's own exports, imports and hosts ------------------------------
  // Owner-level access without a connection's tier; left out of the published declarations.

  /**
   * @internal Calls `listener` after every change readers can see (a write here, or one from
   * another tab or device), once it is indexed; returns the unsubscribe. For screens that follow
   * the memory.
   */
  onChange(listener: () => void): () => void {
    return this.engine.onChanged(listener)
  }

  /** @internal Resolves once every note is held: an open may leave the texts in storage a while, and `committed` reads them. */
  notesHeld(): Promise<void> {
    return this.engine.notesHeld()
  }

  /** @internal The committed graph, read-only; wait for `notesHeld` before reading its notes. */
  get committed(): GraphView {
    return this.engine.committedGraph
  }

  /** @internal An entity with its edges, notes and merged names, whatever name or merged variant it is asked by. */
  inspect(name: string): EntityDetail {
    return this.engine.inspect(name)
  }

  /** @internal */
  listFiles(): AppendixFile[] {
    return this.engine.listFiles()
  }

  /** @internal */
  readFile(path: string): Promise<{ file: AppendixFile; data: Uint8Array }> {
    return this.engine.readFile(path)
  }

  /** @internal */
  listProposals(): MergeProposal[] {
    return this.engine.listProposals()
  }

  /** @internal The alias rows as stored (with when each merge was recorded). */
  storedAliases(): Promise<Alias[]> {
    return this.engine.storedAliases()
  }

  /** @internal Observations written elsewhere, kept with their slugs, in one transaction; each must satisfy the write contract. */
  importObservations(observations: Observation[], aliases: Alias[]): Promise<number> {
    return this.engine.importObservations(observations, aliases)
  }

  /** @internal A memory's content from a backup: observations, aliases and pairs already rejected, in one transaction. */
  importSnapshot(snapshot: Parameters<MemoryEngine['importSnapshot']>[0]): Promise<number> {
    return this.engine.importSnapshot(snapshot)
  }

  /** @internal An appendix file recorded as `createdBy` made it (a restored backup keeps its authors). */
  storeFileAs(input: unknown, createdBy: string): Promise<AppendixFile> {
    return this.engine.storeFile(input, createdBy)
  }

  /** @internal Merges content from another copy of this memory (a backup), as a sync peer's change is merged. */
  async mergeChange(change: RemoteChange): Promise<void> {
    await this.engine.applyRemote(change)
  }

  /** @internal Saves a new name in the memory's database (the device's registry is the caller's). */
  rename(name: string): Promise<void> {
    return this.engine.rename(name)
  }

  async close(): Promise<void> {
    this.revocations.close()
    this.sharing?.stop()
    this.visibilitySharing?.stop()
    await Promise.all(this.stamping)
    if (this.syncing) await (await this.syncing.catch(() => null))?.stop()
    await this.saveIndex().catch(() => undefined)
    this.engine.close()
  }
}

/** Both indexes embed a recall's query: one embedder that remembers recent queries serves both. */
function queryOnce(embedder: Embedder | undefined): Embedder | undefined {
  return embedder && rememberRecentTexts(embedder)
}

/** What the entity index holds of an entity, for a restore that must rebuild its BM25 part. */
function entityDocOf(graph: Graph, key: string): EntityDoc | undefined {
  const e = graph.entities.get(key)
  return e && entityDoc(e)
}

function noteTextOf(graph: Graph, slug: string): string | undefined {
  const o = graph.getObservation(slug)
  return o && noteDoc(o).text
}

function indexOptions(info: MemoryInfo, embedder: Embedder | undefined): Parameters<typeof createEntityIndex>[0] {
  return embedder && info.retrieval.embedder !== BM25_ONLY ? { embedder, weights: info.retrieval.weights } : {}
}

function noteIndexOptions(info: MemoryInfo, embedder: Embedder | undefined): Parameters<typeof createNoteIndex>[0] {
  return embedder && info.retrieval.embedder !== BM25_ONLY ? { embedder } : {}
}

/**
 * The saved note index brought up to the observations, or a new one when there is none or it
 * is unreadable; `current` when it was restored as saved with the open state.
 */
async function openNoteIndex(saved: SavedIndex | undefined, graph: Graph, opts: Parameters<typeof createNoteIndex>[0], current: boolean, clock: StepClock, readNotes: () => Promise<void>): Promise<{ index: NoteIndex; current: boolean }> {
  const restore = () => (saved ? Promise.resolve().then(() => restoreNoteIndex(unpackIndex(saved) as never, { ...opts, texts: (slug) => noteTextOf(graph, slug) })) : Promise.resolve(undefined))
  // one of an older analysis is rebuilt from the texts: read them, then restore again
  const restored = await restore().catch((err) => (err instanceof NoteInStorage ? readNotes().then(restore) : undefined)).catch(() => undefined)
  clock.step('note index')
  if (restored && current) return { index: restored, current: true }
  // any other snapshot is brought up to the notes, which needs their texts
  await readNotes()
  const notes = restored ?? (await createNoteIndex(opts))
  const gone = notes.keys().filter((slug) => graph.getObservation(slug) === undefined)
  if (gone.length) await notes.remove(gone)
  // only notes whose text changed since the snapshot are embedded again
  await notes.upsert([...graph.allObservations()].map(noteDoc))
  clock.step('note catch-up')
  return { index: notes, current: false }
}

/** Reads the name blocks saved with the state `saveId` of `entities` (in save order), when first asked. */
function nameBlocksOf(db: MemoryDB, saveId: string, entities: readonly Entity[]): () => Promise<SavedNameBlocks | undefined> {
  return async () => unpackNameBlocks((await db.meta.get(NAME_BLOCKS_KEY))?.value, saveId, entities.map((e) => e.key))
}

/** The texts of the save `saveId` from their parts' rows, or, when those are of another save, from the observation rows. */
function noteSource(db: MemoryDB, saveId: string, slugs: string[]): NoteSource {
  return {
    part: async (part) => unpackNoteTexts((await db.meta.get(`${NOTE_TEXTS_KEY}${part}`))?.value, saveId, slugs, part),
    rows: () => db.observations.toArray(),
    async some(wanted) {
      return (await db.observations.bulkGet(wanted)).filter((o): o is Observation => o !== undefined)
    },
  }
}

interface OpenRead {
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
function readForOpen(db: MemoryDB): Promise<OpenRead> {
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
function readObservations(db: MemoryDB): Promise<Pick<OpenRead, 'version' | 'rulesMatch' | 'graphRow' | 'aliases'> & { observations: Observation[] }> {
  return db.transaction('r', [db.observations, db.aliases, db.meta], async () => {
    const [observations, aliases, meta] = await Promise.all([db.observations.toArray(), db.aliases.toArray(), db.meta.bulkGet([VERSION_KEY, DERIVATION_KEY, GRAPH_SNAPSHOT_KEY])])
    const [versionRow, rulesRow, graphRow] = meta
    return { observations, aliases, version: typeof versionRow?.value === 'number' ? versionRow.value : 0, rulesMatch: rulesRow?.value === DERIVATION_RULES, graphRow: graphRow?.value }
  })
}

interface StepClock {
  /** Milliseconds per step, in order. */
  readonly steps: Record<string, number>
  step(name: string): void
}

/** Times the steps of an open, for the benchmarks (and anyone asking why an open was slow). */
function stepClock(): StepClock {
  let last = performance.now()
  const steps: Record<string, number> = {}
  return {
    steps,
    step(name) {
      const now = performance.now()
      steps[name] = (steps[name] ?? 0) + (now - last)
      last = now
    },
  }
}

function checkRetrieval(info: MemoryInfo, embedder: Embedder | undefined): void {
  const r = info.retrieval
  if (r.embedder === BM25_ONLY) return
  if (!embedder) throw new MemoryError('config_locked', `memory "${info.name}" was created with embedder ${r.embedder}; open it with that embedder`, { retrieval: r })
  if (embedder.id !== r.embedder || embedder.checksum !== r.modelChecksum || embedder.dimensions !== r.dimensions) {
    throw new MemoryError(
      'config_locked',
      `memory "${info.name}" was created with embedder ${r.embedder} (${r.dimensions} dimensions); this is ${embedder.id} (${embedder.dimensions}). Its retrieval config cannot change: use migrate to copy it into a new memory with the new embedder.`,
      { retrieval: r, offered: { embedder: embedder.id, modelChecksum: embedder.checksum, dimensions: embedder.dimensions } },
    )
  }
}

/** Rewrites the stored entity and relationship rows derived by other rules than this build's. */
async function repairDerived(db: MemoryDB, graph: Graph): Promise<void> {
  // in pieces, as an import: one transaction of every row left Chromium an undo log to scan at each open
  await writeDerivedInPieces(db, [...graph.entities.values()], [...graph.relationships.values()], [...graph.edgeBacking()])
  await db.meta.put({ key: DERIVATION_KEY, value: DERIVATION_RULES })
}

/**
 * Copies a memory's observations and merges into a new memory with another retrieval config,
 * re-embedding everything. The old memory is left as it was.
 */
export async function migrateMemory(id: string, opts: CreateMemoryOptions): Promise<Memory> {
  const old = new MemoryDB(id, opts)
  const registry = new RegistryDB(opts)
  const exists = await registry.memories.get(id)
  registry.close()
  if (!exists) throw new MemoryError('not_found', `no memory with id "${id}"`, { id })
  const [observations, aliases] = await Promise.all([old.observations.toArray(), old.aliases.toArray()])
  old.close()
  const next = await Memory.create(opts)
  await next.importObservations(observations, aliases)
  return next
}

export async function listMemories(opts: IndexedDBFactory = {}): Promise<MemoryInfo[]> {
  const registry = new RegistryDB(opts)
  const all = await registry.memories.toArray()
  registry.close()
  return all
}
