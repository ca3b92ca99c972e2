import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { localMemoryProvider } from '../../src/mcp/provider'
import { SNAPSHOT_FILE } from '../../src/mcp/snapshot-file'
import { dispatchTool } from '../../src/tools/dispatch'
import { ada, engine, society } from '../engine/fixture'

let dir = ''
afterEach(async () => {
  if (dir) await rm(dir, { recursive: true, force: true })
})

describe('local memory provider with a directory', () => {
  it('keeps observations, slugs and merges across a restart', async () => {
    dir = await mkdtemp(join(tmpdir(), 'cairn-mcp-'))
    const first = localMemoryProvider({ dir })
    const conn = await (await first.memory()).connect({ agent: 'a', tier: 'full' })
    const { slug } = await conn.write({ title: 'Ada', content: 'Ada worked on the Engine.', entities: [ada, engine], relationships: [{ source: 'Ada Lovelace', type: 'works_on', target: 'Analytical Engine' }] })
    await conn.write({ title: 'Society', content: 'The Royal Society of London heard of it.', entities: [society, { ...society, name: 'Royal Society Inc.' }] })
    const gone = await conn.write({ title: 'gone', content: 'deleted later', entities: [{ name: 'Ephemera', type: 'thing', description: 'will be deleted' }] })
    await conn.delete(gone.slug)
    const proposal = (await conn.consolidate()).find((p) => p.names.includes('Royal Society Inc.'))
    expect(proposal).toBeTruthy()
    await conn.acceptProposal(proposal!.id, { canonical: 'Royal Society' })
    await first.close()

    const saved = JSON.parse(await readFile(join(dir, SNAPSHOT_FILE), 'utf8'))
    expect(saved.observations).toHaveLength(2)

    const second = localMemoryProvider({ dir })
    const again = await (await second.memory()).connect({ agent: 'b', tier: 'read' })
    const read = await dispatchTool(again, 'get_observation', { slug })
    expect(read).toMatchObject({ ok: true, result: { slug, title: 'Ada' } })
    expect((await dispatchTool(again, 'get_observation', { slug: gone.slug })).ok).toBe(false)
    const recall = await again.recall({ query: 'Ada Lovelace' })
    expect(recall.entities.map((e) => e.name)).toContain('Analytical Engine')
    expect((await again.inspect('Royal Society Inc.')).entity.name).toBe('Royal Society')
    await second.close()
  })

  it('refuses a file that is not a snapshot, naming it', async () => {
    dir = await mkdtemp(join(tmpdir(), 'cairn-mcp-'))
    for (const text of [JSON.stringify({ hello: 'world' }), '{not json', 'null']) {
      await writeFile(join(dir, SNAPSHOT_FILE), text)
      await expect(localMemoryProvider({ dir }).memory()).rejects.toMatchObject({ code: 'storage_failed', message: expect.stringContaining(SNAPSHOT_FILE) })
    }
  })
})
