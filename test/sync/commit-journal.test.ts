// A local commit and its sync-document update are saved in two steps. If the process dies
// between them, the next bind must not let the older document undo the commit: the engine's
// journal of unmirrored commits makes the local state win for exactly those keys.
import { describe, expect, it, vi } from 'vitest'
import type { ObservationInput } from '../../src/index'
import { Graph } from '../../src/core/graph'
import { graphFingerprint } from '../helpers/graph-fingerprint'
import { ALIASES_JOURNAL_KEY, observationJournalKey } from '../../src/engine/memory-engine'
import { readMemoryDoc } from '../../src/sync/memory-doc'
import { ada, engine as analyticalEngine, fixture, society } from '../engine/fixture'
import { engineOf } from '../../src/internals'

const obs = (title: string, entities: ObservationInput['entities'], content = `${title}: notes.`): ObservationInput => ({ title, content, entities })

/** From now on the document's updates never reach disk, as if the tab died before saving them. */
function loseDocumentSaves(db: { docUpdates: { add: (...a: never[]) => unknown } }): void {
  vi.spyOn(db.docUpdates, 'add').mockRejectedValue(new Error('the tab was closed before this was saved'))
}

describe('commits whose document update was never saved', () => {
  it('survive the next bind: updates keep their content, deletes stay deleted, new writes are kept', async () => {
    const f = await fixture()
    await f.memory.sync()
    const kept = await f.conn.write(obs('Ada at the Society', [ada, society]))
    const edited = await f.conn.write(obs('Engine notes', [analyticalEngine], 'first draft'))
    const removed = await f.conn.write(obs('Stray note', [{ name: 'Stray Topic', type: 'concept', description: 'A topic only this note names' }]))
    await (await f.memory.sync()).settled()
    expect(await engineOf(f.memory).journalRows()).toEqual([])

    loseDocumentSaves(engineOf(f.memory).db)
    await f.conn.update(edited.slug, { content: 'second draft, acknowledged' })
    await f.conn.delete(removed.slug)
    const added = await f.conn.write(obs('Written just before the crash', [ada]))
    expect((await engineOf(f.memory).journalRows()).map((r) => r.key).sort()).toEqual([edited.slug, removed.slug, added.slug].map(observationJournalKey).sort())
    await f.memory.close()
    vi.restoreAllMocks()

    const reopened = await f.reopen()
    const sync = await reopened.sync()
    await sync.settled()
    const g = engineOf(reopened).committedGraph
    expect(g.getObservation(edited.slug)?.content).toBe('second draft, acknowledged')
    expect(g.getObservation(removed.slug)).toBeUndefined()
    expect(g.entities.has('stray topic')).toBe(false)
    expect(g.getObservation(added.slug)).toBeDefined()
    expect(g.getObservation(kept.slug)).toBeDefined()
    // the document now carries the local state, so other devices get it too
    const inDoc = readMemoryDoc(sync.doc)
    expect(inDoc.observations.get(edited.slug)?.content).toBe('second draft, acknowledged')
    expect(inDoc.observations.has(removed.slug)).toBe(false)
    expect(inDoc.observations.has(added.slug)).toBe(true)
    // and the graph is what its observations derive
    const stored = await engineOf(reopened).db.observations.toArray()
    expect(graphFingerprint(g)).toBe(graphFingerprint(Graph.derive(stored, g.aliasMap())))
    await vi.waitFor(async () => expect(await engineOf(reopened).journalRows()).toEqual([]))
    await reopened.close()

    // once saved, a third opening changes nothing
    const third = await f.reopen()
    await (await third.sync()).settled()
    expect(graphFingerprint(engineOf(third).committedGraph)).toBe(graphFingerprint(g))
    await third.close()
  })

  it('an accepted merge whose document update was lost stays accepted', async () => {
    const f = await fixture()
    await f.conn.write(obs('Long name', [{ name: 'International Business Machines', type: 'organization', description: 'American computer company' }]))
    await f.conn.write(obs('Short name', [{ name: 'IBM', type: 'organization', description: 'computer company from Armonk' }]))
    await f.conn.write(obs('Surgeon', [{ name: 'Dr. Jane Doe', type: 'person', description: 'surgeon at the city hospital' }]))
    await f.conn.write(obs('Surgeon again', [{ name: 'Jane Doe', type: 'person', description: 'surgeon at city hospital' }]))
    await (await f.memory.sync()).settled()
    const proposals = await f.conn.consolidate()
    // a first merge reaches the document, so it holds an alias map the lost one must override
    const saved = proposals.find((p) => p.pair.includes('jane doe'))
    expect(saved).toBeDefined()
    await f.conn.acceptProposal(saved!.id, { canonical: 'Jane Doe' })
    await (await f.memory.sync()).settled()
    const proposal = proposals.find((p) => p.pair.includes('ibm'))
    expect(proposal).toBeDefined()
    loseDocumentSaves(engineOf(f.memory).db)
    await f.conn.acceptProposal(proposal!.id, { canonical: 'International Business Machines' })
    expect(engineOf(f.memory).committedGraph.entities.has('ibm')).toBe(false)
    const merged = graphFingerprint(engineOf(f.memory).committedGraph)
    expect((await engineOf(f.memory).journalRows()).map((r) => r.key)).toContain(ALIASES_JOURNAL_KEY)
    await f.memory.close()
    vi.restoreAllMocks()

    const reopened = await f.reopen()
    await (await reopened.sync()).settled()
    expect(graphFingerprint(engineOf(reopened).committedGraph)).toBe(merged)
    await reopened.close()
  })

  it('a later commit keeps its row when an earlier commit of the same key is marked saved', async () => {
    const f = await fixture()
    const rows: Array<Array<{ key: string; stamp: string }>> = []
    engineOf(f.memory).onCommitted((c) => rows.push(c.journal ?? []))
    const first = await f.conn.write(obs('Twice edited', [ada]))
    await f.conn.update(first.slug, { content: 'edited' })
    expect(rows).toHaveLength(2)
    await engineOf(f.memory).markMirrored(rows[0]!)
    expect(await engineOf(f.memory).journalRows()).toEqual(rows[1])
    await engineOf(f.memory).markMirrored(rows[1]!)
    expect(await engineOf(f.memory).journalRows()).toEqual([])
    await f.memory.close()
  })

  it('a change from another device clears the journal for what it touched, so an older local state cannot override it', async () => {
    const f = await fixture()
    const mine = await f.conn.write(obs('Shared note', [ada]))
    expect((await engineOf(f.memory).journalRows()).map((r) => r.key)).toEqual([observationJournalKey(mine.slug)])
    const theirs = { ...engineOf(f.memory).committedGraph.getObservation(mine.slug)!, content: 'edited on the other device' }
    await engineOf(f.memory).applyRemote({ put: [theirs], deleted: [] })
    expect(await engineOf(f.memory).journalRows()).toEqual([])
    await f.memory.close()
  })
})
