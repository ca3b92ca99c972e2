// The app's engine keeps every open memory in its sync document, but a memory answers first:
// the document is read and reconciled after the open, so writes made meanwhile must still
// reach it, and a document that cannot be read must not keep the memory from opening.
import 'fake-indexeddb/auto'
import { afterEach, describe, expect, it } from 'vitest'
import { connectEngine } from '../../src/engine/client'
import { exposeEngine } from '../../src/engine/host'
import { Memory } from '../../src/engine/memory-handle'
import { MemoryDB } from '../../src/store/db'
import { loadMemoryDoc } from '../../src/sync/doc-store'
import { readMemoryDoc } from '../../src/sync/memory-doc'
import { engineOf } from '../../src/internals'

const ada = { name: 'Ada Lovelace', type: 'person', description: 'mathematician who wrote on the engine' }

const channels: MessagePort[] = []
afterEach(() => {
  for (const port of channels.splice(0)) port.close()
})

function engineOverChannel(): ReturnType<typeof connectEngine> {
  const { port1, port2 } = new MessageChannel()
  channels.push(port1, port2)
  exposeEngine(port1)
  return connectEngine(port2)
}

/** A memory with one note, kept in its sync document, closed again. */
async function storedMemory(): Promise<string> {
  const memory = await Memory.create({ name: 'kept' })
  const conn = await memory.connect({ agent: 'owner', tier: 'full' })
  await conn.write({ title: 'Ada', content: 'Ada wrote the first program.', entities: [ada] })
  await (await memory.sync()).settled()
  await memory.close()
  return memory.info.id
}

async function documentObservations(id: string): Promise<string[]> {
  const memory = await Memory.open(id)
  try {
    return [...readMemoryDoc(await loadMemoryDoc(engineOf(memory).db)).observations.values()].map((o) => o.title).sort()
  } finally {
    await memory.close()
  }
}

describe('the sync document of a memory the app opens', () => {
  it('takes the writes made before it was bound', async () => {
    const id = await storedMemory()
    const client = engineOverChannel()
    const memory = await client.openMemory(id)
    const conn = await memory.connect({ agent: 'page', tier: 'read_write' })
    await conn.write({ title: 'Babbage', content: 'Babbage built the engine.', entities: [{ name: 'Charles Babbage', type: 'person', description: 'built the analytical engine' }] })
    expect((await memory.syncView()).state).toBe('local')
    await conn.write({ title: 'Ada again', content: 'Ada translated the memoir.', entities: [ada] })
    await memory.close()
    expect(await documentObservations(id)).toEqual(['Ada', 'Ada again', 'Babbage'])
  })

  it('a document that cannot be read keeps the memory from syncing, not from opening', async () => {
    const id = await storedMemory()
    const db = new MemoryDB(id, {})
    await db.docUpdates.add({ update: new Uint8Array([255, 255, 255, 255, 255]) })
    db.close()

    const client = engineOverChannel()
    const memory = await client.openMemory(id)
    const conn = await memory.connect({ agent: 'page', tier: 'read_write' })
    const answer = await conn.recall({ query: 'mathematician' })
    expect(answer.entities.map((e) => e.name)).toEqual(['Ada Lovelace'])
    await expect(memory.syncView()).rejects.toThrow(/Unexpected end of array/)
    await memory.close()
  })
})
