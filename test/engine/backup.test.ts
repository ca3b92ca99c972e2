import { describe, expect, it } from 'vitest'
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb'
import { graphFingerprint } from '../helpers/graph-fingerprint'
import { listMemories } from '../../src/index'
import { exportMemory, importMemory } from '../../src/engine/backup'
import { ada, engine, fixture } from './fixture'
import { engineOf } from '../../src/internals'

async function populated() {
  const f = await fixture()
  const { conn } = f
  await conn.write({ title: 'ada', content: 'Ada wrote notes on the engine', tags: ['history'], entities: [ada, engine], relationships: [{ source: ada.name, type: 'wrote about', target: engine.name }], files: ['notes/ada.bin'] })
  await conn.write({ title: 'ibm', content: 'c', entities: [{ name: 'International Business Machines', type: 'organization', description: 'American computer company' }] })
  await conn.write({ title: 'ibm2', content: 'c', entities: [{ name: 'IBM', type: 'organization', description: 'computer company from Armonk' }] })
  await conn.write({ title: 'doe', content: 'c', entities: [{ name: 'Dr. Jane Doe', type: 'person', description: 'surgeon at the city hospital' }, { name: 'Jane Doe', type: 'person', description: 'surgeon at city hospital' }] })
  const proposals = await conn.consolidate()
  const ibm = proposals.find((p) => p.pair.includes('ibm'))!
  await conn.acceptProposal(ibm.id, { canonical: 'International Business Machines' })
  const doe = (await conn.listProposals()).find((p) => p.status === 'open' && p.names.some((n) => n.includes('Jane')))!
  await conn.rejectProposal(doe.id)
  const bytes = new Uint8Array(70_000).map((_, i) => (i * 31) % 256)
  await conn.storeFile({ path: 'notes/ada.bin', filename: 'ada.bin', type: 'application/octet-stream', data: bytes, description: 'raw notes' })
  return { ...f, bytes, rejectedId: doe.id }
}

describe('memory backups', () => {
  it('an exported memory imports into another device with the same graph, slugs, files and decisions', async () => {
    const f = await populated()
    const backup = await exportMemory(f.memory)
    // a backup is plain JSON and carries no connection secrets
    const json = JSON.stringify(backup)
    expect(json).not.toContain('tokenHash')
    const other = new IDBFactory()
    const imported = await importMemory(JSON.parse(json), { indexedDB: other, IDBKeyRange })
    expect(imported.info.id).not.toBe(f.memory.info.id)
    expect(imported.info.name).toBe('test memory')
    expect(imported.info.retrieval).toEqual(f.memory.info.retrieval)
    expect(graphFingerprint(engineOf(imported).committedGraph)).toBe(graphFingerprint(engineOf(f.memory).committedGraph))
    const slugs = (m: typeof imported) => [...engineOf(m).committedGraph.allObservations()].map((o) => o.slug).sort()
    expect(slugs(imported)).toEqual(slugs(f.memory))
    expect(imported.listConnections()).toEqual([])
    const conn = await imported.connect({ agent: 'reader', tier: 'full' })
    const file = await conn.readFile('notes/ada.bin')
    expect([...file.data]).toEqual([...f.bytes])
    expect(file.file.sha256).toBe((await f.conn.listFiles())[0]!.sha256)
    expect((await conn.inspect('IBM')).entity.key).toBe('international business machines')
    expect((await conn.listProposals()).find((p) => p.id === f.rejectedId)?.status).toBe('rejected')
    // the rejected pair stays rejected in the copy
    expect((await conn.consolidate()).some((p) => p.id === f.rejectedId)).toBe(false)
    expect((await conn.recall({ query: 'mathematician algorithm' })).entities[0]!.name).toBe('Ada Lovelace')
  })

  it('refuses malformed backups with invalid_request naming the problem, creating no memory', async () => {
    const f = await populated()
    const good = await exportMemory(f.memory)
    const other = new IDBFactory()
    const deps = { indexedDB: other, IDBKeyRange }
    const bad: Array<[unknown, RegExp]> = [
      [null, /JSON object/],
      [{ ...good, format: 'cairn-memory@9' }, /format/],
      [{ ...good, observations: 'x' }, /observations must be an array/],
      [{ ...good, observations: [{ ...good.observations[0], slug: 'Bad Slug!' }] }, /observations\[0\]\.slug/],
      [{ ...good, observations: [{ ...good.observations[0], title: '' }] }, /observations\[0\].*title/],
      [{ ...good, files: [{ ...good.files[0], data: 'not base64!' }] }, /files\[0\]\.data/],
      [{ ...good, files: [{ ...good.files[0], data: btoa('tampered') }] }, /sha256/],
      [{ ...good, info: { ...good.info, retrieval: { embedder: 'bm25-only' } } }, /info\.retrieval/],
      [{ ...good, files: [{ ...good.files[0], path: '../escape.bin' }] }, /files\[0\].*path/],
      [{ ...good, files: [good.files[0], good.files[0]] }, /appears twice/],
    ]
    for (const [backup, message] of bad) {
      await expect(importMemory(backup, deps)).rejects.toMatchObject({ code: 'invalid_request', message: expect.stringMatching(message) })
    }
    expect(await listMemories(deps)).toEqual([])
  })

  it('a backup made with an embedder needs that embedder to import', async () => {
    const f = await populated()
    const backup = await exportMemory(f.memory)
    const locked = { ...backup, info: { ...backup.info, retrieval: { ...backup.info.retrieval, embedder: 'some-model', modelChecksum: 'abc', dimensions: 8 } } }
    const deps = { indexedDB: new IDBFactory(), IDBKeyRange }
    await expect(importMemory(locked, deps)).rejects.toMatchObject({ code: 'config_locked' })
    expect(await listMemories(deps)).toEqual([])
  })
})
