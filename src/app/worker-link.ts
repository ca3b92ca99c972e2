// The page's link to the engine worker, and the one `full` connection per memory that the
// person using the app holds. Its token is kept in localStorage so a reload reattaches.
import * as Comlink from 'comlink'
import { connectEngine, type EngineClient } from '../engine/client'
import type { Connection } from '../engine/connection'
import { BM25_ONLY, type ConnectionInfo, type MemoryInfo, type RetrievalConfig, type Tier, type Visibility } from '../core/types'
import { CLAIM_KEY_PREFIX, encodeJoinCode, type JoinCode } from '../core/join-code'
import { STATIC_MANIFEST_FILE } from '../search/static-model-files'
import { USE_LITE_MANIFEST_FILE } from '../search/use-lite-files'
import { fetchFresh } from '../search/model-cache'
import type { SyncView } from '../sync/memory-sync'
import type { ImportOutcome } from '../interop/import'
import { writeAccess, type WriteAccess } from './write-access'
import { gatherChanges, type ChangeGather } from './change-gather'

export type AppConnection = Comlink.Remote<Connection>

const AGENT = 'cairn-app'
const tokenKey = (memoryId: string): string => `cairn.connection.${memoryId}`

let client: EngineClient | undefined
let answered: Promise<void> | undefined
/** The list asked for as the page starts, kept for the first screen that reads it (see `startEngine`). */
let firstList: Promise<MemoryInfo[]> | undefined
const connections = new Map<string, Promise<AppConnection>>()

export function engine(): EngineClient {
  // any other call may change the memories: the early list is only for a reader before it
  firstList = undefined
  return started()
}

function started(): EngineClient {
  if (!client) {
    const worker = new Worker(new URL('../../worker/engine.worker.ts', import.meta.url), { type: 'module', name: 'cairn-engine' })
    answered = new Promise((resolve) => {
      worker.addEventListener('message', () => resolve(), { once: true })
      worker.addEventListener('error', () => resolve(), { once: true })
    })
    client = connectEngine(worker)
  }
  return client
}

/**
 * Starts the engine worker and asks it for the memory list at once, while the shell's own chunk
 * is still loading: the worker's script loads, runs and opens IndexedDB meanwhile, and the first
 * screen to read the list gets this answer.
 */
export function startEngine(): void {
  const list = started().listMemories()
  // a failure is reported to the screen that reads it
  list.catch(() => undefined)
  firstList = list
}

/** Resolves when the engine worker first answers the page, or fails to start; starts it if need be. */
export function engineAnswered(): Promise<void> {
  started()
  return answered!
}

/** A model a new memory may rank with, as this app serves it. */
export interface ModelChoice {
  id: string
  /** What a person reads when choosing. */
  label: string
}

const idIn = (bytes: Uint8Array): string | undefined => {
  const manifest = JSON.parse(new TextDecoder().decode(bytes)) as { id?: unknown }
  return typeof manifest.id === 'string' ? manifest.id : undefined
}

/** The shipped model's id; the service worker serves its manifest offline. */
async function shippedModelId(url: string): Promise<string> {
  const response = await fetch(url)
  if (!response.ok) throw new Error(`The embedding model manifest could not be loaded (HTTP ${response.status}).`)
  const id = idIn(new Uint8Array(await response.arrayBuffer()))
  if (!id) throw new Error('The embedding model manifest has no id.')
  return id
}

/** An optional model's id, through the model cache: offline it is offered once this device has used it. */
async function optionalModelId(url: string): Promise<string | undefined> {
  try {
    return idIn((await fetchFresh(url, { what: 'model manifest' })).bytes)
  } catch {
    return undefined
  }
}

let served: Promise<ModelChoice[]> | undefined

/**
 * The models this app serves, read from their manifests so the app never hard-codes an id: the
 * shipped one first (the default), then USE-lite when the build made it.
 */
export function modelChoices(): Promise<ModelChoice[]> {
  served ??= (async () => {
    const base = `${import.meta.env.BASE_URL}models/`
    const [shipped, useLite] = await Promise.all([shippedModelId(`${base}${STATIC_MANIFEST_FILE}`), optionalModelId(`${base}optional/${USE_LITE_MANIFEST_FILE}`)])
    const choices: ModelChoice[] = [{ id: shipped, label: 'Word vectors (GloVe, in the app, fast)' }]
    if (useLite) choices.push({ id: useLite, label: 'Sentence encoder (USE-lite, a 28 MB download on first use; closer matches for questions, slower writes)' })
    return choices
  })()
  served.catch(() => (served = undefined))
  return served
}

export function listMemories(): Promise<MemoryInfo[]> {
  const first = firstList
  firstList = undefined
  return first ?? engine().listMemories()
}

/** What a person picks for a new memory's retrieval; fixed once the memory exists. */
export interface RetrievalChoice {
  /** `hybrid` ranks with the shipped model and BM25; `bm25` with BM25 alone (no model download). */
  mode: 'hybrid' | 'bm25'
  /** Weight of the vector score in hybrid mode, 0 to 1. */
  vectorWeight?: number
  /** Characters of an observation shown in a recall snippet, 40 to 2000. */
  snippetLength?: number
  /** In hybrid mode, the model to rank with (one of `modelChoices()`; default the shipped one); refused if this app serves none by that id. */
  model?: string
}

/** The engine options that make a memory rank as `choice` says. */
async function retrievalOptions(choice: RetrievalChoice): Promise<{ embedderId?: string; retrieval: Partial<RetrievalConfig> }> {
  const snippet = choice.snippetLength !== undefined ? { snippetLength: choice.snippetLength } : {}
  if (choice.mode === 'bm25') return { retrieval: { embedder: BM25_ONLY, ...snippet } }
  const models = await modelChoices()
  const embedderId = choice.model ?? models[0]!.id
  if (!models.some((m) => m.id === embedderId)) {
    throw new Error(`This memory ranks with the model ${embedderId}, and this app serves ${models.map((m) => m.id).join(' and ')}: update the app on one of the devices.`)
  }
  const vector = choice.vectorWeight
  return { embedderId, retrieval: { ...snippet, ...(vector !== undefined ? { weights: { text: 1 - vector, vector } } : {}) } }
}

export async function createMemory(name: string, visibility: Visibility, orgId?: string, choice: RetrievalChoice = { mode: 'hybrid' }): Promise<MemoryInfo> {
  const memory = await engine().createMemory({ name, visibility, ...(orgId ? { orgId } : {}), ...(await retrievalOptions(choice)) })
  return adopt(memory)
}

/** Keeps the app's own full connection to a memory it just made (created, joined or imported). */
async function adopt(memory: Awaited<ReturnType<EngineClient['createMemory']>>): Promise<MemoryInfo> {
  const info = await memory.info
  const conn = await memory.connect({ agent: AGENT, tier: 'full', localOnly: true })
  const token = await conn.token
  if (token) localStorage.setItem(tokenKey(info.id), token)
  connections.set(info.id, Promise.resolve(conn as unknown as AppConnection))
  return info
}

/** The memory's single-valued relationship types (stored form, e.g. `works_at`). */
export async function singleValuedTypes(memoryId: string): Promise<string[]> {
  return (await engine().openMemory(memoryId)).singleValued()
}

/** Declares which relationship types hold one target at a time; the list replaces the earlier one. */
export async function setSingleValued(memoryId: string, types: string[]): Promise<string[]> {
  return (await engine().openMemory(memoryId)).setSingleValued(types)
}

export async function memoryInfo(memoryId: string): Promise<MemoryInfo> {
  return (await engine().openMemory(memoryId)).info
}

/** Memories this device reads as an organization member: the app's own connection to them is `read`. */
const memberKey = (memoryId: string): string => `cairn.member.${memoryId}`

/** Whether this device holds the memory as an organization member (read-only) rather than as its owner. */
export function isMemberCopy(memoryId: string): boolean {
  return localStorage.getItem(memberKey(memoryId)) !== null
}

/** What the app may change in the memory from this device, with the reason where it may not. */
export async function appAccess(memoryId: string): Promise<WriteAccess> {
  return writeAccess(await (await connection(memoryId)).tier, isMemberCopy(memoryId))
}

/** Reattaches with the stored token, or creates the connection on first open. */
export function connection(memoryId: string): Promise<AppConnection> {
  let conn = connections.get(memoryId)
  if (!conn) {
    conn = attach(memoryId)
    conn.catch(() => connections.delete(memoryId))
    connections.set(memoryId, conn)
  }
  return conn
}

async function attach(memoryId: string): Promise<AppConnection> {
  const memory = await engine().openMemory(memoryId)
  const saved = localStorage.getItem(tokenKey(memoryId))
  if (saved) {
    try {
      return (await memory.connectWithToken(saved)) as unknown as AppConnection
    } catch {
      // revoked or from another profile: fall through and make a new one
      localStorage.removeItem(tokenKey(memoryId))
    }
  }
  const tier: Tier = localStorage.getItem(memberKey(memoryId)) ? 'read' : 'full'
  const conn = await memory.connect({ agent: AGENT, tier, localOnly: true })
  const token = await conn.token
  if (token) localStorage.setItem(tokenKey(memoryId), token)
  return conn as unknown as AppConnection
}

// ---- organizations ----------------------------------------------------------------------

export type { OrganizationListing } from '../engine/organizations'

export function listOrganization(serverUrl: string, credential: string): ReturnType<EngineClient['listOrganization']> {
  return engine().listOrganization(serverUrl.trim(), credential.trim())
}

/**
 * Makes this device's copy of an organization memory and opens it read-only: the app's own
 * connection to it is the member's `read` one, and a reload reconnects with the credential.
 */
export async function joinOrganization(serverUrl: string, credential: string, memoryId: string): Promise<MemoryInfo> {
  connections.delete(memoryId)
  const { readToken } = await engine().joinOrganization(serverUrl.trim(), credential.trim(), memoryId)
  localStorage.setItem(memberKey(memoryId), '1')
  localStorage.setItem(tokenKey(memoryId), readToken)
  localStorage.setItem(syncKey(memoryId), JSON.stringify({ serverUrl: serverUrl.trim(), token: credential.trim() }))
  return memoryInfo(memoryId)
}

export type { ConnectionInfo } from '../core/types'

export async function listConnections(memoryId: string): Promise<ConnectionInfo[]> {
  return (await engine().openMemory(memoryId)).listConnections()
}

/** The id of the connection this app itself uses, so the screens can keep it from being revoked. */
export async function appConnectionId(memoryId: string): Promise<string> {
  return (await connection(memoryId)).id
}

/** Creates a connection for another agent; its token is in the result and nowhere else. */
export async function createConnection(memoryId: string, agent: string, tier: Tier): Promise<{ id: string; token: string }> {
  const memory = await engine().openMemory(memoryId)
  const conn = await memory.connect({ agent, tier })
  try {
    const [id, token] = await Promise.all([conn.id, conn.token])
    if (!token) throw new Error('The engine returned no token for the new connection.')
    return { id, token }
  } finally {
    // the page never calls through this handle, so the worker may drop it
    conn[Comlink.releaseProxy]()
  }
}

export async function revokeConnection(memoryId: string, connectionId: string): Promise<void> {
  await (await engine().openMemory(memoryId)).revoke(connectionId)
}

/** The message to show for a failed call: MemoryError messages are written for people. */
export function errorMessage(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code
    return typeof code === 'string' ? `${error.message} (${code})` : error.message
  }
  return String(error)
}

// ---- sync -------------------------------------------------------------------------------

export type { SyncView }

const syncKey = (memoryId: string): string => `cairn.sync.${memoryId}`

/** The sync server this app runs beside by default (`npm start`). */
export function defaultSyncServer(): string {
  return `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.hostname || '127.0.0.1'}:1234`
}

export function savedSync(memoryId: string): { serverUrl: string; token: string } | null {
  try {
    const saved = JSON.parse(localStorage.getItem(syncKey(memoryId)) ?? 'null') as { serverUrl?: unknown; token?: unknown } | null
    return saved && typeof saved.serverUrl === 'string' && typeof saved.token === 'string' ? { serverUrl: saved.serverUrl, token: saved.token } : null
  } catch {
    return null
  }
}

/** Connects the memory to a sync server and remembers it, so a reload reconnects. */
export async function syncWith(memoryId: string, serverUrl: string, token: string): Promise<SyncView> {
  const view = await (await engine().openMemory(memoryId)).syncWith(serverUrl.trim(), token.trim())
  localStorage.setItem(syncKey(memoryId), JSON.stringify({ serverUrl: serverUrl.trim(), token: token.trim() }))
  return view
}

/**
 * Connects with a token, or with the server's claim key for a memory the server does not hold
 * yet: the server then issues this device a full token for it, which is what is remembered.
 */
export async function syncOrClaim(memoryId: string, serverUrl: string, tokenOrKey: string): Promise<SyncView> {
  const given = tokenOrKey.trim()
  if (!given.startsWith(CLAIM_KEY_PREFIX)) return syncWith(memoryId, serverUrl, given)
  const url = new URL('/claim', serverUrl.trim().replace(/^ws/, 'http'))
  let answer: Response
  try {
    answer = await fetch(url, { method: 'POST', headers: { authorization: `Bearer ${given}`, 'content-type': 'application/json' }, body: JSON.stringify({ memoryId, agent: 'first device' }) })
  } catch {
    throw new Error(`The sync server at ${serverUrl} did not answer; is it running?`)
  }
  const body = (await answer.json().catch(() => ({}))) as { token?: unknown; message?: unknown }
  if (!answer.ok || typeof body.token !== 'string') throw new Error(`The server did not let this memory be claimed: ${typeof body.message === 'string' ? body.message : `HTTP ${answer.status}`}`)
  return syncWith(memoryId, serverUrl, body.token)
}

/** Reconnects to the remembered server, if any. */
export async function resumeSync(memoryId: string): Promise<void> {
  const saved = savedSync(memoryId)
  if (saved) await syncWith(memoryId, saved.serverUrl, saved.token)
}

/** Calls `listener` on every sync change until the returned function is called. */
export async function watchSync(memoryId: string, listener: (view: SyncView) => void): Promise<() => void> {
  const memory = await engine().openMemory(memoryId)
  // returns nothing: the worker awaits the call, and a Svelte state proxy cannot be cloned back
  const stop = await memory.watchSync(
    Comlink.proxy((view: SyncView) => {
      if (view.firstSync) receiving.add(memoryId)
      else receiving.delete(memoryId)
      listener(view)
    }),
  )
  return () => {
    receiving.delete(memoryId)
    void stop().catch(() => undefined)
  }
}

/** Memories receiving a first sync, as the sync panel last heard: their screens refresh less often meanwhile. */
const receiving = new Set<string>()

// ---- screens that follow the memory --------------------------------------------------

interface Followers {
  refreshers: Set<() => void>
  stop: Promise<() => void>
  gather: ChangeGather
}

const followed = new Map<string, Followers>()

/**
 * Calls `refresh` after changes to the memory, whoever made them (this tab, another tab, another
 * device through sync), gathered (see change-gather.ts); returns the function that stops it.
 * One watch on the worker serves every screen following the memory.
 */
export function followChanges(memoryId: string, refresh: () => void): () => void {
  let f = followed.get(memoryId)
  if (!f) {
    const refreshers = new Set<() => void>()
    const gather = gatherChanges(() => {
      for (const r of refreshers) r()
    }, () => receiving.has(memoryId))
    const fresh: Followers = { refreshers, gather, stop: Promise.resolve(() => undefined) }
    fresh.stop = engine()
      .openMemory(memoryId)
      .then((memory) => memory.watchChanges(Comlink.proxy(() => gather.changed())))
      .then((stop) => () => void stop().catch(() => undefined))
      // a memory that will not open shows its own error on the screen
      .catch(() => () => undefined)
    followed.set(memoryId, (f = fresh))
  }
  const followers = f
  followers.refreshers.add(refresh)
  return () => {
    followers.refreshers.delete(refresh)
    if (followers.refreshers.size || followed.get(memoryId) !== followers) return
    followed.delete(memoryId)
    followers.gather.stop()
    void followers.stop.then((stop) => stop())
  }
}

/**
 * Makes this device's copy of a memory that lives on a sync server, and fills it from there.
 * With a join code's retrieval config the copy ranks exactly as the other devices do.
 */
export async function joinMemory(memoryId: string, name: string, serverUrl: string, token: string, retrieval?: JoinCode['retrieval']): Promise<MemoryInfo> {
  const choice: RetrievalChoice = !retrieval
    ? { mode: 'hybrid' }
    : retrieval.embedder === BM25_ONLY
      ? { mode: 'bm25', snippetLength: retrieval.snippetLength }
      : { mode: 'hybrid', model: retrieval.embedder, vectorWeight: retrieval.weights.vector, snippetLength: retrieval.snippetLength }
  const info = await adopt(await engine().createMemory({ id: memoryId.trim(), name, visibility: 'private', ...(await retrievalOptions(choice)) }))
  await syncWith(info.id, serverUrl, token)
  return info
}

/** The code another device pastes to join this memory: id, name, retrieval config and server, no token. */
export async function joinCodeFor(memoryId: string): Promise<string> {
  return encodeJoinCode(await memoryInfo(memoryId), savedSync(memoryId)?.serverUrl)
}

export interface Pairing {
  /** The join code with a new connection's token: it opens the memory on one more device. */
  code: string
  /** This app's address with the code, to open on the other device (or scan as a QR image). */
  link: string
  connectionId: string
  device: string
}

/** The hash a pairing link carries; the memory list reads a code from it. */
export const PAIRING_HASH = '#/join/'

/**
 * Pairs another device: makes a full connection named for it (shared with the sync server
 * through the memory, revocable on the Connections screen) and puts its token in a join code.
 * Needs the memory to sync with a server: the code carries that server.
 */
export async function pairDevice(memoryId: string, device: string): Promise<Pairing> {
  const serverUrl = savedSync(memoryId)?.serverUrl
  if (!serverUrl) throw new Error('Sync this memory with a server first: the other device joins through it.')
  const made = await createConnection(memoryId, device, 'full')
  const code = encodeJoinCode(await memoryInfo(memoryId), serverUrl, made.token)
  return { code, link: `${location.origin}${location.pathname}${PAIRING_HASH}${code}`, connectionId: made.id, device }
}

// ---- backups ----------------------------------------------------------------------------

/** A memory's name as a file name: no path separators or spaces. */
function fileStem(name: string): string {
  return name.replace(/[\\/:*?"<>|\s]+/g, '-').replace(/^[-.]+|-+$/g, '') || 'memory'
}

/** Starts the browser's download of `blob` as `filename`. */
function saveAs(blob: Blob, filename: string): string {
  const url = URL.createObjectURL(blob)
  const a = document.createElement('a')
  a.href = url
  a.download = filename
  document.body.append(a)
  a.click()
  a.remove()
  // the download has started from the click; the URL is only needed until then
  setTimeout(() => URL.revokeObjectURL(url), 10_000)
  return filename
}

/** Downloads the whole memory as `<name>.cairn.json`. */
export async function downloadBackup(memoryId: string): Promise<string> {
  const backup = await (await engine().openMemory(memoryId)).exportBackup()
  return saveAs(new Blob([JSON.stringify(backup)], { type: 'application/json' }), `${fileStem(backup.info.name)}.cairn.json`)
}

/** Downloads the backup with the derived graph (entities, relationships) as `<name>.graph.json`. */
export async function downloadGraph(memoryId: string): Promise<string> {
  const whole = await (await engine().openMemory(memoryId)).exportGraph()
  return saveAs(new Blob([JSON.stringify(whole)], { type: 'application/json' }), `${fileStem(whole.info.name)}.graph.json`)
}

/** Downloads the memory as an Obsidian vault, `<name>-vault.zip` holding the folder `<name>/`. */
export async function downloadVault(memoryId: string): Promise<string> {
  const memory = await engine().openMemory(memoryId)
  const stem = fileStem((await memory.info).name)
  const zip = await memory.exportVault(stem)
  return saveAs(new Blob([zip as Uint8Array<ArrayBuffer>], { type: 'application/zip' }), `${stem}-vault.zip`)
}

/** Adds an MCP memory server file (JSON lines) or merges a Cairn backup into a memory on this device. */
export async function importIntoMemory(memoryId: string, file: File): Promise<ImportOutcome> {
  return (await engine().openMemory(memoryId)).importFile(await file.text(), file.name)
}

/** A backup file read and parsed, before anything is imported. */
export async function readBackupFile(file: File): Promise<{ parsed: unknown; name: string | undefined; notes: number }> {
  let parsed: unknown
  try {
    parsed = JSON.parse(await file.text())
  } catch {
    throw new Error(`"${file.name}" is not a JSON file; choose a .cairn.json backup. (An MCP memory server .jsonl file is imported into a memory from its Memory menu.)`)
  }
  const b = parsed as { info?: { name?: unknown }; observations?: unknown }
  return { parsed, name: typeof b?.info?.name === 'string' ? b.info.name : undefined, notes: Array.isArray(b?.observations) ? b.observations.length : 0 }
}

/** Imports a parsed backup as a new memory, with this app's own connection; says what came in. */
export async function importBackup(parsed: unknown): Promise<{ info: MemoryInfo; notes: number; entities: number; files: number }> {
  const info = await adopt(await engine().importBackup(parsed))
  const conn = await connection(info.id)
  const [page, vocabulary, files] = await Promise.all([conn.listObservations({ limit: 1 }), conn.vocabulary(), conn.listFiles()])
  return { info, notes: page.total, entities: vocabulary.entities.length, files: files.length }
}

/** How many notes a memory holds, for confirmations. */
export async function noteCount(memoryId: string): Promise<number> {
  return (await (await connection(memoryId)).listObservations({ limit: 1 })).total
}

export async function renameMemory(memoryId: string, name: string): Promise<MemoryInfo> {
  return (await engine().openMemory(memoryId)).rename(name)
}

/**
 * Makes a memory this device owns organization-visible or private again; the sync server cuts
 * members off as it applies the change. A member's copy is refused here, before it reaches the
 * engine: its visibility belongs to the owner, and the server would refuse it anyway.
 */
export async function setMemoryVisibility(memoryId: string, visibility: Visibility, orgId?: string): Promise<MemoryInfo> {
  if (isMemberCopy(memoryId)) throw new Error('This memory is read here as an organization member: only its owner changes who may read it.')
  const id = orgId?.trim()
  return (await engine().openMemory(memoryId)).setVisibility(visibility, visibility === 'organization' ? id : undefined)
}

/** Deletes this device's copy of a memory, with the app's token and sync settings for it. */
export async function deleteMemoryHere(memoryId: string): Promise<void> {
  const conn = connections.get(memoryId)
  connections.delete(memoryId)
  await conn?.then((c) => c[Comlink.releaseProxy](), () => undefined)
  await engine().deleteMemory(memoryId)
  localStorage.removeItem(tokenKey(memoryId))
  localStorage.removeItem(syncKey(memoryId))
}
