// The durable Node store: what one process wrote, the next one opens, whole; a killed process
// keeps every acknowledged write; a torn log tail, compaction and an old memory.json are handled.
import { spawn } from 'node:child_process'
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { localMemoryProvider } from '../../src/mcp/provider'
import { serialize } from 'node:v8'
import { importMcpMemory } from '../../src/interop/import'
import Dexie from 'dexie'
import { LOG_FILE, openDurableIndexedDB, rawStores, SNAPSHOT_FILE } from '../../src/node-store/durable-indexeddb'
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb'
import { decodeSnapshot } from '../../src/node-store/record-log'
import { mcpMemoryFile } from '../bench/package'
import { openNodeMemory } from '../../src/node-store/node-memory'
import { dispatchTool } from '../../src/tools/dispatch'
import { ada, engine, society } from '../engine/fixture'
import { engineOf, ownerOf } from '../../src/internals'

let dirs: string[] = []
const scratch = (): string => {
  const dir = mkdtempSync(join(tmpdir(), 'cairn-store-'))
  dirs.push(dir)
  return dir
}
afterEach(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
  dirs = []
})

describe('durable Node store', () => {
  it('keeps observations, slugs, merges, rejections, files, connections and the memory id across a restart', async () => {
    const dir = scratch()
    const first = await openNodeMemory(dir, { name: 'kept' })
    const id = first.memory.info.id
    const conn = await first.memory.connect({ agent: 'a', tier: 'full' })
    const { slug } = await conn.write({ title: 'Ada', content: 'Ada worked on the Engine.', entities: [ada, engine], relationships: [{ source: 'Ada Lovelace', type: 'works_on', target: 'Analytical Engine' }] })
    await conn.write({ title: 'Society', content: 'The Royal Society of London heard of it.', entities: [society, { ...society, name: 'Royal Society Inc.' }, { ...society, name: 'The Royal Society' }] })
    const gone = await conn.write({ title: 'gone', content: 'deleted later', entities: [{ name: 'Ephemera', type: 'thing', description: 'will be deleted' }] })
    await conn.delete(gone.slug)
    const proposals = await conn.consolidate()
    const accept = proposals.find((p) => p.names.includes('Royal Society Inc.'))!
    await conn.acceptProposal(accept.id, { canonical: 'Royal Society' })
    const reject = (await conn.consolidate()).find((p) => p.status === 'open')
    if (reject) await conn.rejectProposal(reject.id)
    await conn.storeFile({ path: 'src/notes.txt', filename: 'notes.txt', type: 'text/plain', data: new TextEncoder().encode('the source'), description: 'the notes' })
    const token = conn.token!
    await first.close()

    const second = await openNodeMemory(dir)
    expect(second.memory.info).toMatchObject({ id, name: 'kept' })
    const again = await second.memory.connectWithToken(token)
    expect((await dispatchTool(again, 'get_observation', { slug })).ok).toBe(true)
    expect((await dispatchTool(again, 'get_observation', { slug: gone.slug })).ok).toBe(false)
    expect((await again.recall({ query: 'Ada Lovelace' })).entities.map((e) => e.name)).toContain('Analytical Engine')
    expect((await again.inspect('Royal Society Inc.')).entity.name).toBe('Royal Society')
    expect(new TextDecoder().decode((await again.readFile('src/notes.txt')).data)).toBe('the source')
    // the search index snapshot is kept at close, so this open restored it instead of rebuilding
    expect(await engineOf(second.memory).db.meta.get('entityIndex')).toBeDefined()
    const statuses = engineOf(second.memory).listProposals().map((p) => [p.id, p.status])
    expect(statuses).toContainEqual([accept.id, 'accepted'])
    if (reject) expect(statuses).toContainEqual([reject.id, 'rejected'])
    await second.close()
  })

  it('keeps a write acknowledged just before the process is killed', async () => {
    const dir = scratch()
    const script = join(dir, 'writer.mts')
    writeFileSync(
      script,
      `import { openNodeMemory } from ${JSON.stringify(new URL('../../src/node-store/node-memory.ts', import.meta.url).pathname)}
// a first session closes cleanly, so the folder holds a snapshot with a saved index older than what follows
const first = await openNodeMemory(process.argv[2], { syncDelayMs: 60_000 })
const w = await first.memory.connect({ agent: 'w' })
for (let i = 0; i < 5; i++) process.stdout.write((await w.write({ title: 'early ' + i, content: 'early note ' + i, entities: [{ name: 'Early ' + i, type: 'thing', description: 'early ' + i }] })).slug + '\\n')
await first.close()
const m = await openNodeMemory(process.argv[2], { syncDelayMs: 60_000 })
const c = await m.memory.connect({ agent: 'w' })
for (let i = 0; ; i++) {
  const r = await c.write({ title: 'note ' + i, content: 'note number ' + i, entities: [{ name: 'Thing ' + i, type: 'thing', description: 'thing ' + i }] })
  process.stdout.write(r.slug + '\\n')
}
`,
    )
    const child = spawn(process.execPath, ['--import', 'tsx', script, join(dir, 'store')], { stdio: ['ignore', 'pipe', 'inherit'] })
    const acked: string[] = []
    await new Promise<void>((resolve) => {
      let buffer = ''
      child.stdout.on('data', (chunk: Buffer) => {
        buffer += chunk.toString()
        const lines = buffer.split('\n')
        buffer = lines.pop()!
        acked.push(...lines)
        // SIGKILL mid-stream: no close, no flush, no fsync (the sync window is a minute)
        if (acked.length >= 30 && !child.killed) child.kill('SIGKILL')
      })
      child.once('exit', () => resolve())
    })
    expect(acked.length).toBeGreaterThanOrEqual(30)
    const reopened = await openNodeMemory(join(dir, 'store'))
    const conn = await reopened.memory.connect({ agent: 'r', tier: 'read' })
    for (const slug of acked) expect((await conn.getObservation(slug)).slug).toBe(slug)
    // the index saved at the first close predates the killed session's writes: open brought it up to date
    expect((await conn.recall({ query: 'Thing 20' })).entities.map((e) => e.name)).toContain('Thing 20')
    expect((await conn.recall({ query: 'Early 3' })).entities.map((e) => e.name)).toContain('Early 3')
    await reopened.close()
  }, 60_000)

  it('cuts off a torn tail and keeps every record before it', async () => {
    const dir = scratch()
    const first = await openNodeMemory(dir)
    const conn = await first.memory.connect({ agent: 'a' })
    const { slug } = await conn.write({ title: 'kept', content: 'kept note', entities: [ada] })
    await first.close()
    const before = statSync(join(dir, LOG_FILE)).size
    appendFileSync(join(dir, LOG_FILE), Buffer.from([0, 0, 1, 0, 9, 9, 9, 9, 1, 2, 3]))

    const second = await openNodeMemory(dir)
    const c2 = await second.memory.connect({ agent: 'b' })
    expect((await c2.getObservation(slug)).title).toBe('kept')
    const next = await c2.write({ title: 'after', content: 'written after the torn tail', entities: [engine] })
    await second.close()
    expect(statSync(join(dir, LOG_FILE)).size).toBeGreaterThan(before)

    const third = await openNodeMemory(dir)
    const c3 = await third.memory.connect({ agent: 'c' })
    expect((await c3.getObservation(next.slug)).title).toBe('after')
    await third.close()
  })

  it('compacts the log into a snapshot and opens the same memory from it', async () => {
    const dir = scratch()
    const first = await openNodeMemory(dir, { compactMinBytes: 4096, compactRatio: 1 })
    const conn = await first.memory.connect({ agent: 'a', tier: 'full' })
    const slugs: string[] = []
    for (let i = 0; i < 30; i++) slugs.push((await conn.write({ title: `n${i}`, content: `note ${i}`, entities: [{ name: `E${i}`, type: 't', description: `entity ${i}` }, ada] })).slug)
    const { slug: deleted } = await conn.write({ title: 'to delete', content: 'x', entities: [engine] })
    expect(existsSync(join(dir, SNAPSHOT_FILE))).toBe(true)
    expect(first.store.stats().logBytes).toBeLessThan(statSync(join(dir, SNAPSHOT_FILE)).size * 2)
    await conn.delete(deleted)
    await first.close()

    const second = await openNodeMemory(dir)
    const c2 = await second.memory.connect({ agent: 'b', tier: 'read' })
    for (const s of slugs) expect((await c2.getObservation(s)).slug).toBe(s)
    await expect(c2.getObservation(deleted)).rejects.toMatchObject({ code: 'not_found' })
    expect((await c2.inspect('Ada Lovelace')).entity.name).toBe('Ada Lovelace')
    await second.close()
  })

  it('refuses a second process on the same folder', async () => {
    const dir = scratch()
    const opened = await openNodeMemory(dir)
    await expect(openNodeMemory(dir)).rejects.toMatchObject({ code: 'conflict' })
    await opened.close()
  })

  it('compacts at close once the log outgrew the snapshot, so the next open reads one snapshot', async () => {
    const dir = scratch()
    const first = await openNodeMemory(dir, { compactMinBytes: 64 * 1024 })
    const conn = await first.memory.connect({ agent: 'a', tier: 'full' })
    const slugs: string[] = []
    const long = (i: number): string => Array.from({ length: 600 }, (_, j) => `word${(i * 31 + j) % 997}`).join(' ')
    for (let i = 0; i < 10; i++) slugs.push((await conn.write({ title: `n${i}`, content: long(i), entities: [{ name: `E${i}`, type: 't', description: `entity ${i}` }] })).slug)
    // the writes alone stay under the bar; the index rows kept at close take the log over it
    expect(first.store.stats().logBytes).toBeLessThan(64 * 1024)
    expect(existsSync(join(dir, SNAPSHOT_FILE))).toBe(false)
    await first.close()
    // the log is back to its generation record; everything is in the snapshot
    expect(existsSync(join(dir, SNAPSHOT_FILE))).toBe(true)
    expect(statSync(join(dir, LOG_FILE)).size).toBeLessThan(64)
    const second = await openNodeMemory(dir)
    const c2 = await second.memory.connect({ agent: 'b', tier: 'read' })
    for (const s of slugs) expect((await c2.getObservation(s)).slug).toBe(s)
    expect((await c2.recall({ query: 'E7' })).entities.map((e) => e.name)).toContain('E7')
    await second.close()
  })

  it('serves the saved index rows from the store by key, alone or with other rows, and forgets a deleted one', async () => {
    const dir = scratch()
    const first = await openNodeMemory(dir)
    const conn = await first.memory.connect({ agent: 'a' })
    await conn.write({ title: 'Ada', content: 'Ada worked on the Engine.', entities: [ada, engine] })
    await engineOf(first.memory).queueSnapshot()
    const db = engineOf(first.memory).db
    const [index, version, missing] = await db.meta.bulkGet(['entityIndex', 'version', 'nothing'])
    expect(index?.value).toMatchObject({ version: 1 })
    expect(version?.value).toBe(1)
    expect(missing).toBeUndefined()
    // each read is a fresh copy: a reader that changes it changes nothing kept
    ;(index!.value as { version: number }).version = 99
    expect(((await db.meta.get('noteIndex'))?.value as { version: number }).version).toBe(1)
    expect(((await db.meta.get('entityIndex'))?.value as { version: number }).version).toBe(1)
    await db.meta.delete('noteIndex')
    expect(await db.meta.get('noteIndex')).toBeUndefined()
    await first.close()

    const second = await openNodeMemory(dir)
    const db2 = engineOf(second.memory).db
    // the deleted row stayed deleted (the open rebuilt the note index from the notes)
    expect(await db2.meta.get('noteIndex')).toBeUndefined()
    expect(((await db2.meta.get('entityIndex'))?.value as { version: number }).version).toBe(1)
    const c2 = await second.memory.connect({ agent: 'b', tier: 'read' })
    expect((await c2.recall({ query: 'Ada Lovelace' })).entities.map((e) => e.name)).toContain('Analytical Engine')
    await second.close()
  })

  it('refuses a folder whose snapshot is in an older format, and leaves it as it was', async () => {
    const dir = scratch()
    const first = await openNodeMemory(dir)
    const conn = await first.memory.connect({ agent: 'a', tier: 'full' })
    await conn.write({ title: 'Ada', content: 'Ada worked on the Engine.', entities: [ada, engine] })
    first.store.compact()
    await first.close()
    // rewrite the snapshot as the first format wrote it: one structured clone of every row
    const framed = decodeSnapshot(readFileSync(join(dir, SNAPSHOT_FILE)))!
    const databases = new Map<string, Map<string, Array<[unknown, Buffer]>>>()
    for (const r of framed.rows) {
      if (!databases.has(r.db)) databases.set(r.db, new Map())
      const tables = databases.get(r.db)!
      if (!tables.has(r.table)) tables.set(r.table, [])
      tables.get(r.table)!.push([r.key, Buffer.from(r.bytes)])
    }
    writeFileSync(join(dir, SNAPSHOT_FILE), serialize({ format: 'cairn-node-store@1', generation: framed.head.generation, databases: [...databases].map(([db, t]) => [db, [...t]]) }))
    const before = readFileSync(join(dir, SNAPSHOT_FILE))
    await expect(openNodeMemory(dir)).rejects.toMatchObject({ code: 'storage_failed', message: expect.stringContaining(SNAPSHOT_FILE) })
    expect(readFileSync(join(dir, SNAPSHOT_FILE)).equals(before)).toBe(true)
    // the failed open let go of the folder: a second try fails the same way, not as a conflict
    await expect(openNodeMemory(dir)).rejects.toMatchObject({ code: 'storage_failed' })
  })

  it('imports an MCP memory server file into a folder, and the next process opens the same graph', async () => {
    const dir = scratch()
    const first = await openNodeMemory(dir)
    const report = await importMcpMemory(first.memory, mcpMemoryFile(300))
    expect(report.entities.imported).toBe(300)
    const graph = engineOf(first.memory).committedGraph
    const before = { entities: [...graph.entities.keys()].sort(), relationships: [...graph.relationships.keys()].sort(), observations: [...graph.allObservations()].map((o) => o.slug).sort() }
    expect(before.relationships.length).toBeGreaterThanOrEqual(report.relations.imported)
    await first.close()

    const second = await openNodeMemory(dir)
    // the texts of a large memory come in after its open
    await ownerOf(second.memory).notesHeld()
    const g2 = engineOf(second.memory).committedGraph
    expect([...g2.entities.keys()].sort()).toEqual(before.entities)
    expect([...g2.relationships.keys()].sort()).toEqual(before.relationships)
    expect([...g2.allObservations()].map((o) => o.slug).sort()).toEqual(before.observations)
    const conn = await second.memory.connect({ agent: 'r', tier: 'read' })
    expect((await conn.inspect('Entity 42')).outgoing.map((r) => r.target)).toContain('Entity 297')
    await second.close()
  })

  it('refuses to read a folder that holds no memory, creating nothing there', async () => {
    const dir = join(scratch(), 'none')
    await expect(openNodeMemory(dir, { mustExist: true })).rejects.toMatchObject({ code: 'not_found' })
    expect(existsSync(dir)).toBe(false)
  })

  it('serves the MCP provider from the folder', async () => {
    const dir = scratch()
    const p = localMemoryProvider({ dir })
    const id = (await p.memory()).info.id
    await p.close()
    const q = localMemoryProvider({ dir })
    expect((await q.memory()).info.id).toBe(id)
    await q.close()
  })

  it('fills a table when a transaction first touches it: indexes, key generator and earlier rows hold after writes and restarts', async () => {
    const dir = scratch()
    type Item = { id: string; tag: string }
    type Entry = { n?: number; text: string }
    const schema = (name: string, deps: { indexedDB: unknown; IDBKeyRange: unknown }): Dexie => {
      const db = new Dexie(name, deps as never)
      db.version(1).stores({ items: 'id, tag', entries: '++n', notes: '' })
      return db
    }
    const session = async (work: (db: Dexie) => Promise<void>): Promise<void> => {
      const store = await openDurableIndexedDB(dir, (name, deps) => schema(name, deps))
      const db = schema('lazy', { indexedDB: store.indexedDB, IDBKeyRange: store.IDBKeyRange })
      try {
        await work(db)
      } finally {
        db.close()
        store.close()
      }
    }
    await session(async (db) => {
      await db.table('items').bulkPut([{ id: 'a', tag: 'x' }, { id: 'b', tag: 'y' }, { id: 'c', tag: 'x' }])
      await db.table('entries').bulkAdd([{ text: 'one' }, { text: 'two' }])
      await db.table('notes').put('kept', 'k1')
    })
    await session(async (db) => {
      // the first touch of each table is a write: the rows already kept are there beside it
      await db.table('items').put({ id: 'd', tag: 'x' })
      expect(await db.table('entries').add({ text: 'three' })).toBe(3)
      await db.table('notes').put('second', 'k2')
      expect((await db.table<Item>('items').where('tag').equals('x').primaryKeys()).sort()).toEqual(['a', 'c', 'd'])
      await db.table('items').delete('a')
    })
    await session(async (db) => {
      // first touch is an index read, inside a transaction over every table
      await db.transaction('r', ['items', 'entries', 'notes'], async () => {
        expect((await db.table<Item>('items').where('tag').equals('x').primaryKeys()).sort()).toEqual(['c', 'd'])
        expect((await db.table<Entry>('entries').toArray()).map((e) => [e.n, e.text])).toEqual([[1, 'one'], [2, 'two'], [3, 'three']])
        expect(await db.table('notes').toArray()).toEqual(['kept', 'second'])
      })
      expect((await db.table<Item>('items').toArray()).map((i) => i.id)).toEqual(['b', 'c', 'd'])
    })
  })
})

describe('the in-process IndexedDB the store fills in place', () => {
  // A restart fills a table's stores directly when a transaction first touches it; with an
  // emulation shaped otherwise (a new fake-indexeddb) it silently copies every row at open
  // instead, which is correct but several times slower. This says so when that happens.
  it('is shaped as the store expects, so a restart loads no table before it is used', async () => {
    const db = new Dexie('shape-check', { indexedDB: new IDBFactory(), IDBKeyRange })
    db.version(1).stores({ rows: 'id', logged: '++seq' })
    await db.open()
    const stores = rawStores(db.backendDB())
    expect(stores && [...stores.keys()].sort()).toEqual(['logged', 'rows'])
    db.close()
  })
})
