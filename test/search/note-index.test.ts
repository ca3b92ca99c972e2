// The note index: BM25 over notes, fused with vectors and a soft word match; a snapshot
// restores exactly what was indexed without embedding anything.
import { describe, expect, it } from 'vitest'
import { isMemoryError } from '../../src/core/errors'
import { createNoteIndex, NOTE_INDEX_FORMAT, restoreNoteIndex, type NoteDoc, type NoteIndexSnapshot } from '../../src/search/note-index'
import { POSTINGS_FORMAT } from '../../src/search/postings-index'
import { defaultEmbedder } from '../support/default-embedder'

/** The notes of a snapshot with their texts, as a format that kept them saved it. */
const withTexts = (snap: NoteIndexSnapshot, texts: NoteDoc[]): NoteDoc[] => snap.slugs.map((slug) => ({ ...texts.find((n) => n.slug === slug)! }))

const notes: NoteDoc[] = [
  { slug: 'karate', text: 'John took karate lessons at the dojo every Tuesday.' },
  { slug: 'budget', text: 'John reviewed the quarterly budget with finance.' },
  { slug: 'cake', text: "Maria baked a lemon cake for her sister's birthday." },
  { slug: 'trip', text: 'Maria spent two weeks travelling around Spain and Portugal.' },
  { slug: 'possessive', text: "Menabrea's article was translated into English." },
]

describe('note index', () => {
  it('BM25 alone finds notes by their words, a possessive as the name itself', async () => {
    const index = await createNoteIndex()
    await index.upsert(notes)
    expect((await index.search('Menabrea', 3)).map((h) => h.slug)).toEqual(['possessive'])
    expect((await index.search('John', 5)).map((h) => h.slug).sort()).toEqual(['budget', 'karate'])
    expect(await index.search('karate', 0)).toEqual([])
    expect(await index.search('   ', 5)).toEqual([])
  })

  it('with a model, a paraphrase finds a note no query word is in', async () => {
    const embedder = await defaultEmbedder()
    const index = await createNoteIndex({ embedder })
    await index.upsert(notes)
    expect((await index.search('martial arts', 1))[0]?.slug).toBe('karate')
    expect((await index.search('which dessert did she make', 1))[0]?.slug).toBe('cake')
    expect((await index.search('European countries visited', 1))[0]?.slug).toBe('trip')
  }, 30_000)

  it('likeness: a note about what the seeds are about is nearer their mean than one about something else; none without a model', async () => {
    const embedder = await defaultEmbedder()
    const index = await createNoteIndex({ embedder })
    await index.upsert([...notes, { slug: 'dessert', text: 'Maria made chocolate cookies and a fruit pie.' }])
    const like = index.likeness(['cake'], ['dessert', 'budget', 'missing'])!
    expect(like[0]).toBeGreaterThan(like[1]!)
    expect(like[2]).toBe(0)
    const plain = await createNoteIndex()
    await plain.upsert(notes)
    expect(plain.likeness(['cake'], ['budget'])).toBeUndefined()
  }, 30_000)

  it('a snapshot restores the same answers without embedding, and refuses another model', async () => {
    const embedder = await defaultEmbedder()
    const index = await createNoteIndex({ embedder })
    await index.upsert(notes)
    await index.remove(['budget'])
    await index.upsert([{ slug: 'cake', text: 'Maria baked brownies for the bake sale.' }])
    const queries = ['martial arts', 'dessert', 'Spain', 'budget', 'translated article']
    const before = await Promise.all(queries.map((q) => index.search(q, 5)))
    let calls = 0
    const counting = { ...embedder, embed: (t: string[]) => (calls++, embedder.embed(t)) }
    const snapshot = structuredClone(await index.snapshot())
    // the saved BM25 index is typed arrays and a term table: no second copy of any note's text
    expect(snapshot.text.format).toBe(POSTINGS_FORMAT)
    expect(snapshot.text.fields.text!.docs).toBeInstanceOf(Int32Array)
    expect(snapshot.text.fields.text!.terms).not.toContain('bake sale')
    // nor the notes' texts: the observations hold them; the snapshot keeps a digest of each
    expect(JSON.stringify(snapshot.slugs)).not.toContain('brownies')
    expect(snapshot.digests).toBeInstanceOf(Float64Array)
    // a small word table: each note's word rows in two bytes
    expect(snapshot.noteWords).toBeInstanceOf(Uint16Array)
    const restored = await restoreNoteIndex(snapshot, { embedder: counting })
    expect(calls).toBe(0)
    expect(restored.keys().sort()).toEqual(['cake', 'karate', 'possessive', 'trip'])
    for (const [i, q] of queries.entries()) expect(await restored.search(q, 5)).toEqual(before[i])
    // rows saved in four bytes (as before, or past 65,536 words) restore the same
    const wide = await restoreNoteIndex({ ...snapshot, noteWords: Int32Array.from(snapshot.noteWords) }, { embedder })
    for (const [i, q] of queries.entries()) expect(await wide.search(q, 5)).toEqual(before[i])
    const outOfTable = await restoreNoteIndex({ ...snapshot, noteWords: Int32Array.from(snapshot.noteWords, () => snapshot.words.length) }, { embedder }).catch((e: unknown) => e)
    expect(isMemoryError(outOfTable) && outOfTable.code).toBe('storage_failed')
    // the digest tells an unchanged text (nothing embedded) from a changed one
    calls = 0
    await restored.upsert([{ slug: 'cake', text: 'Maria baked brownies for the bake sale.' }, notes[0]!])
    expect(calls).toBe(0)
    await restored.upsert([{ slug: 'cake', text: 'Maria baked brownies for the bake sale!' }])
    expect(calls).toBe(1)
    const misdigested = await restoreNoteIndex({ ...snapshot, digests: new Float64Array(1) }, { embedder }).catch((e: unknown) => e)
    expect(isMemoryError(misdigested) && misdigested.code).toBe('storage_failed')
    const refused = await restoreNoteIndex(snapshot, {}).catch((e: unknown) => e)
    expect(isMemoryError(refused) && refused.code).toBe('config_locked')
    const broken = await restoreNoteIndex({ ...snapshot, noteWordCounts: new Uint16Array(1) }, { embedder }).catch((e: unknown) => e)
    expect(isMemoryError(broken) && broken.code).toBe('storage_failed')
  }, 30_000)

  it('reads only its own format, and postings that do not hold together are rebuilt from the texts given, refused without them', async () => {
    const index = await createNoteIndex()
    await index.upsert(notes)
    await index.remove(['budget'])
    const snap = await index.snapshot()
    // a snapshot of an earlier format is unreadable: the open rebuilds the index from the notes
    for (const format of ['cairn-note-index@1', 'cairn-note-index@2', 'cairn-note-index@3']) {
      const old = await restoreNoteIndex(structuredClone({ ...snap, docs: withTexts(snap, notes), format }) as never).catch((e: unknown) => e)
      expect(isMemoryError(old) && old.code).toBe('storage_failed')
    }
    const queries = ['karate', 'Menabrea', 'John', 'Spain trip', 'brownies']
    const field = snap.text.fields.text!
    const text = { ...snap.text, fields: { text: { ...field, docs: field.docs.map(() => 99) } } }
    const refused = await restoreNoteIndex(structuredClone({ ...snap, text })).catch((e: unknown) => e)
    expect(isMemoryError(refused) && refused.code).toBe('storage_failed')
    const given = await restoreNoteIndex(structuredClone({ ...snap, text }), { texts: (slug) => notes.find((n) => n.slug === slug)?.text })
    for (const q of queries) expect(await given.search(q, 5)).toEqual(await index.search(q, 5))
  })

  it('a restored snapshot\'s digests tell which notes changed: only those are embedded again', async () => {
    const embedder = await defaultEmbedder()
    const index = await createNoteIndex({ embedder })
    await index.upsert(notes)
    const snap = await index.snapshot()
    let calls = 0
    const counting = { ...embedder, embed: (t: string[]) => (calls++, embedder.embed(t)) }
    const restored = await restoreNoteIndex(structuredClone(snap), { embedder: counting })
    for (const q of ['martial arts', 'dessert', 'Spain', 'Menabrea']) expect(await restored.search(q, 5)).toEqual(await index.search(q, 5))
    calls = 0
    await restored.upsert(notes)
    expect(calls).toBe(0)
    await restored.upsert([{ ...notes[0]!, text: `${notes[0]!.text} Again.` }])
    expect(calls).toBe(1)
    const saved = await restored.snapshot()
    expect(saved.format).toBe(NOTE_INDEX_FORMAT)
    const at = saved.slugs.indexOf(notes[0]!.slug)
    expect([...saved.digests].filter((_, i) => i !== at)).toEqual([...snap.digests].filter((_, i) => i !== snap.slugs.indexOf(notes[0]!.slug)))
    expect(saved.digests[at]).not.toBe(snap.digests[snap.slugs.indexOf(notes[0]!.slug)])
  }, 30_000)

  it('made a step at a time (a worker answering between steps), a snapshot is the one made at once', async () => {
    const index = await createNoteIndex()
    // as many terms as notes: the postings are saved some terms a step
    const many = Array.from({ length: 2_000 }, (_, i) => ({ slug: `n${i}`, text: `harbour note word${i} and word${i * 7}` }))
    await index.upsert(many)
    let paces = 0
    const stepped = await index.snapshot(() => {
      paces++
      return undefined
    })
    expect(paces).toBeGreaterThan(2_000 / 64)
    expect(stepped).toEqual(await index.snapshot())
  })

  it('keeps no word the model has no vector for: such a word can never match softly', async () => {
    const embedder = await defaultEmbedder()
    const index = await createNoteIndex({ embedder })
    const numbered = notes.map((n, i) => ({ ...n, text: `${n.text} Ticket 48213${i} zqxvbnw.` }))
    await index.upsert(numbered)
    const zero = (await embedder.embed(['482130', 'zqxvbnw'])).map((v) => v.some((x) => x !== 0))
    expect(zero).toEqual([false, false])
    const snap = await index.snapshot()
    expect(snap.words).not.toContain('zqxvbnw')
    expect(snap.words.filter((w) => /^\d+$/.test(w))).toEqual([])
    expect(snap.words).toContain('karate')
    // BM25 still finds a note by such a word, and the soft match by the others
    expect((await index.search('482132', 1))[0]?.slug).toBe('cake')
    expect((await index.search('martial arts', 1))[0]?.slug).toBe('karate')
  }, 30_000)

  it('a restored index changed afterwards answers as the index it was saved from, changed the same way', async () => {
    const embedder = await defaultEmbedder()
    let seed = 3
    const rand = () => ((seed = Math.imul(seed ^ (seed >>> 15), 2246822507) + 0x9e3779b9) >>> 0) / 2 ** 32
    const vocab = 'river stone ledger orchard lantern harbor copper meadow signal archive falcon doctor guitar garden painting travel'.split(' ')
    const text = (n: number) => Array.from({ length: n }, () => vocab[Math.floor(rand() * vocab.length)]).join(' ')
    const original = await createNoteIndex({ embedder })
    await original.upsert(Array.from({ length: 40 }, (_, i) => ({ slug: `n${i}`, text: text(3 + (i % 5)) })))
    const restored = await restoreNoteIndex(structuredClone(await original.snapshot()), { embedder })
    const queries = ['river garden', 'copper signal lantern', 'doctor', 'painting travel meadow']
    const same = async () => {
      for (const q of queries) expect(await restored.search(q, 8)).toEqual(await original.search(q, 8))
    }
    // searched first, as after an open: nothing looked up by slug yet
    await same()
    for (let step = 0; step < 60; step++) {
      // the maps by slug and word built a part at a time, as in idle time after an open
      if (step % 3 === 0) restored.mapKeys(4)
      const slug = `n${Math.floor(rand() * 50)}`
      if (rand() < 0.35) {
        for (const index of [original, restored]) await index.remove([slug])
      } else {
        const doc = { slug, text: text(2 + Math.floor(rand() * 6)) }
        for (const index of [original, restored]) await index.upsert([doc])
      }
      if (step % 10 === 9) await same()
    }
    expect(restored.keys().sort()).toEqual(original.keys().sort())
    while (!restored.mapKeys(10));
    for (const q of queries) expect(await restored.search(q, 8)).toEqual(await original.search(q, 8))
    // and saved again, it restores to the same answers once more
    const again = await restoreNoteIndex(structuredClone(await restored.snapshot()), { embedder })
    for (const q of queries) expect(await again.search(q, 8)).toEqual(await original.search(q, 8))
  }, 30_000)

  it('a snapshot listing a note twice answers searches, and is refused as unreadable once changes build its map', async () => {
    const index = await createNoteIndex()
    await index.upsert(notes)
    const snap = structuredClone(await index.snapshot())
    snap.slugs[1] = snap.slugs[0]!
    const restored = await restoreNoteIndex(snap)
    expect((await restored.search('Menabrea', 3)).map((h) => h.slug)).toEqual(['possessive'])
    const errors: unknown[] = []
    for (let i = 0; i < 100; i++) await restored.upsert([{ slug: `new${i}`, text: `A new note, number ${i}.` }]).catch((e: unknown) => errors.push(e))
    expect(errors.length).toBeGreaterThan(0)
    expect(errors.every((e) => isMemoryError(e) && e.code === 'storage_failed')).toBe(true)
  })
})
