// The note index: BM25 over notes, fused with vectors and a soft word match; a snapshot
// restores exactly what was indexed without embedding anything.
import { describe, expect, it } from 'vitest'
import { isMemoryError } from '../../src/core/errors'
import { create, insertMultiple, save as oramaSave } from '@orama/orama'
import { createNoteIndex, FLOAT_NOTE_INDEX_FORMAT, JSON_NOTE_INDEX_FORMAT, NOTE_INDEX_FORMAT, restoreNoteIndex, TEXT_NOTE_INDEX_FORMAT, type FloatNoteIndexSnapshot, type JsonNoteIndexSnapshot, type NoteDoc, type NoteIndexSnapshot, type TextNoteIndexSnapshot } from '../../src/search/note-index'
import { ENGLISH_STOP_WORDS } from '../../src/search/stop-words'
import { wholeWordIndex } from '../support/whole-word-radix-index'
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

  it('a snapshot of Orama\'s radix index as JSON (the format before postings) restores to the same answers, and saves as postings', async () => {
    const index = await createNoteIndex()
    await index.upsert(notes)
    await index.remove(['budget'])
    const snap = await index.snapshot()
    const radix = create({ schema: { text: 'string' } as const, sort: { enabled: false }, components: { tokenizer: { language: 'english', stemming: true, stopWords: [...ENGLISH_STOP_WORDS] }, index: wholeWordIndex } })
    const docs = withTexts(snap, notes)
    insertMultiple(radix, docs.map((d) => ({ id: d.slug, text: d.text })))
    const { slugs: _, digests: __, ...rest } = snap
    const legacy: JsonNoteIndexSnapshot = { ...rest, docs, format: JSON_NOTE_INDEX_FORMAT, text: JSON.stringify(oramaSave(radix)) }
    const restored = await restoreNoteIndex(structuredClone(legacy))
    const queries = ['karate', 'Menabrea', 'John', 'Spain trip', 'brownies']
    for (const q of queries) expect(await restored.search(q, 5)).toEqual(await index.search(q, 5))
    expect((await restored.snapshot()).format).toBe(NOTE_INDEX_FORMAT)
    // postings that do not hold together are not trusted: rebuilt from the texts a snapshot kept
    // them, refused (for the caller to index the notes again) from one that keeps digests
    const field = snap.text.fields.text!
    const text = { ...snap.text, fields: { text: { ...field, docs: field.docs.map(() => 99) } } }
    const textKept: TextNoteIndexSnapshot = { ...rest, docs, format: TEXT_NOTE_INDEX_FORMAT, text }
    const rebuilt = await restoreNoteIndex(structuredClone(textKept))
    for (const q of queries) expect(await rebuilt.search(q, 5)).toEqual(await index.search(q, 5))
    const refused = await restoreNoteIndex(structuredClone({ ...snap, text })).catch((e: unknown) => e)
    expect(isMemoryError(refused) && refused.code).toBe('storage_failed')
    const given = await restoreNoteIndex(structuredClone({ ...snap, text }), { texts: (slug) => notes.find((n) => n.slug === slug)?.text })
    for (const q of queries) expect(await given.search(q, 5)).toEqual(await index.search(q, 5))
  })

  it('a snapshot that kept the notes\' texts restores to the same answers, and its digests tell what changed', async () => {
    const embedder = await defaultEmbedder()
    const index = await createNoteIndex({ embedder })
    await index.upsert(notes)
    const snap = await index.snapshot()
    const { slugs: _, digests: __, ...rest } = snap
    const old: TextNoteIndexSnapshot = { ...rest, format: TEXT_NOTE_INDEX_FORMAT, docs: withTexts(snap, notes) }
    let calls = 0
    const counting = { ...embedder, embed: (t: string[]) => (calls++, embedder.embed(t)) }
    const restored = await restoreNoteIndex(structuredClone(old), { embedder: counting })
    for (const q of ['martial arts', 'dessert', 'Spain', 'Menabrea']) expect(await restored.search(q, 5)).toEqual(await index.search(q, 5))
    calls = 0
    await restored.upsert(notes)
    expect(calls).toBe(0)
    await restored.upsert([{ ...notes[0]!, text: `${notes[0]!.text} Again.` }])
    expect(calls).toBe(1)
    const saved = await restored.snapshot()
    expect(saved.format).toBe(NOTE_INDEX_FORMAT)
    expect([...saved.digests].slice(1)).toEqual([...snap.digests].slice(1))
    expect(saved.digests[0]).not.toBe(snap.digests[0])
  }, 30_000)

  it('a snapshot of float vectors (the format before int8) restores to the same answers without embedding', async () => {
    const embedder = await defaultEmbedder()
    const index = await createNoteIndex({ embedder })
    await index.upsert(notes)
    const snap = await index.snapshot()
    expect(snap.vectors.byteLength + snap.wordVectors.byteLength).toBe((snap.slugs.length + snap.words.length) * snap.dimensions)
    const d = snap.dimensions
    const flat = async (texts: string[]) => {
      const out = new Float32Array(texts.length * d)
      ;(await embedder.embed(texts)).forEach((v, i) => out.set(v, i * d))
      return out
    }
    const { scales: _, wordScales: __, slugs: ___, digests: ____, ...rest } = snap
    const docs = withTexts(snap, notes)
    const legacy: FloatNoteIndexSnapshot = { ...rest, docs, format: FLOAT_NOTE_INDEX_FORMAT, text: '{}', vectors: await flat(docs.map((n) => n.text)), wordVectors: await flat(snap.words) }
    let calls = 0
    const counting = { ...embedder, embed: (t: string[]) => (calls++, embedder.embed(t)) }
    const restored = await restoreNoteIndex(structuredClone(legacy), { embedder: counting })
    expect(calls).toBe(0)
    for (const q of ['martial arts', 'which dessert did she make', 'European countries visited', 'budget']) expect(await restored.search(q, 5)).toEqual(await index.search(q, 5))
    expect((await restored.snapshot()).format).toBe(snap.format)
  }, 30_000)

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
