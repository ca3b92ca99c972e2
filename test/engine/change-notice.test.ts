// A memory tells its readers of every change they can see, made here or arriving from another
// tab or device, once a recall made then already finds it: the app's screens follow it.
import { describe, expect, it } from 'vitest'
import { engineOf, ownerOf } from '../../src/internals'
import { observation } from '../sync/fixture'
import { ada, fixture } from './fixture'

describe('change notices', () => {
  it('a local write, an update, a delete and a remote change each notify once, after they are indexed', async () => {
    const { memory, conn } = await fixture()
    const found: Array<Promise<string[]>> = []
    const stop = ownerOf(memory).onChange(() => {
      // read at the notice itself: the change is already searchable
      found.push(conn.recall({ query: 'radiologist' }).then((r) => r.entities.map((e) => e.name)))
    })
    const { slug } = await conn.write({ title: 'Ada', content: 'Ada wrote.', entities: [ada] })
    await conn.update(slug, { content: 'Ada wrote again.' })
    const remote = observation('from-elsewhere', { entities: [{ name: 'Tomas Berg', type: 'person', description: 'Radiologist who reads the scans', queries: [] }] })
    await engineOf(memory).applyRemote({ put: [remote], deleted: [] })
    await conn.delete(slug)
    expect(found).toHaveLength(4)
    const names = await Promise.all(found)
    expect(names[2]).toContain('Tomas Berg')
    stop()
    await conn.write({ title: 'After', content: 'Not heard.', entities: [ada] })
    expect(found).toHaveLength(4)
    await memory.close()
  })
})
