// The Markdown vault writes world time: a note's validity and what it replaces in its front
// matter and body, an edge's own dates, and on entity pages each note's interval and successors.
import { describe, expect, it } from 'vitest'
import { buildMarkdownVault } from '../../src/interop/markdown-vault'
import { fixture } from '../engine/fixture'

describe('buildMarkdownVault and world time', () => {
  it('writes validFrom, validTo, supersedes and the supersession on the entity page', async () => {
    const f = await fixture()
    const dana = { name: 'Dana', type: 'person', description: 'An engineer' }
    const acme = { name: 'Acme', type: 'organization', description: 'A company' }
    const beta = { name: 'Beta', type: 'organization', description: 'Another company' }
    const a = await f.conn.write({ title: 'Dana at Acme', content: 'Dana works at Acme.', validFrom: '2020-01-01', entities: [dana, acme], relationships: [{ source: 'Dana', type: 'works_at', target: 'Acme', validTo: '2023-06-01' }] })
    const b = await f.conn.write({ title: 'Dana at Beta', content: 'Dana works at Beta.', validFrom: '2023-06-01', supersedes: [a.slug], entities: [dana, beta] })
    const { files } = await buildMarkdownVault(f.memory)
    const byPath = new Map(files.map((x) => [x.path, String(x.data)]))
    const older = byPath.get(`notes/${a.slug}.md`)!
    expect(older).toContain('valid_from: "2020-01-01T00:00:00.000Z"')
    expect(older).toContain('- [[entities/Dana|Dana]] → works_at → [[entities/Acme|Acme]] (valid until 2023-06-01)')
    const newer = byPath.get(`notes/${b.slug}.md`)!
    expect(newer).toContain(`supersedes: ["${a.slug}"]`)
    expect(newer).toContain(`## Replaces\n\n- [[notes/${a.slug}|Dana at Acme]]`)
    const page = byPath.get('entities/Dana.md')!
    expect(page).toContain(`[[notes/${a.slug}|Dana at Acme]] (${(await f.conn.getObservation(a.slug)).observedAt.slice(0, 10)}) (valid from 2020-01-01 until 2023-06-01), superseded by [[notes/${b.slug}|Dana at Beta]]`)
  })
})
