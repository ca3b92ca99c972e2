// Entities found in a note's text without any model: `[[Name]]` links, names and aliases the
// memory already holds, and capitalized phrases that may be new entities.
import { normalizeName } from '../../core/normalize'
import type { Vocabulary } from '../../core/notes'

export interface Span {
  start: number
  end: number
}

/** A `[[Name]]` or `[[Name|shown text]]` link. */
export interface WikiLink extends Span {
  name: string
  shown: string
}

export interface Mention extends Span {
  /** The canonical entity key this text means (after aliases). */
  key: string
  /** The entity's name as the memory shows it. */
  name: string
  /** The text as written. */
  text: string
}

export interface Phrase extends Span {
  text: string
  key: string
}

const WIKI = /\[\[([^\[\]|\n]{1,200})(?:\|([^\[\]\n]{1,200}))?\]\]/g

export function wikiLinks(text: string): WikiLink[] {
  const out: WikiLink[] = []
  for (const m of text.matchAll(WIKI)) {
    const name = m[1]!.trim()
    if (!normalizeName(name)) continue
    out.push({ start: m.index, end: m.index + m[0].length, name, shown: (m[2] ?? m[1]!).trim() })
  }
  return out
}

/** Links still being typed: from an unclosed `[[` to the end of its line (or the next `[[`). */
export function openSpans(text: string): Span[] {
  const out: Span[] = []
  for (let at = text.indexOf('[['); at >= 0; at = text.indexOf('[[', at + 2)) {
    const close = text.indexOf(']]', at + 2)
    const line = text.indexOf('\n', at + 2)
    const next = text.indexOf('[[', at + 2)
    const stop = Math.min(line < 0 ? text.length : line, next < 0 ? text.length : next)
    if (close < 0 || close > stop) out.push({ start: at, end: stop })
  }
  return out
}

/** The text as it is saved: each link becomes the words it shows. */
export function plainText(text: string): string {
  return text.replace(WIKI, (_all, name: string, shown?: string) => (shown ?? name).trim())
}

/** An unclosed `[[` just before the caret: what has been typed after it, for autocomplete. */
export function openLink(text: string, caret: number): { start: number; query: string } | null {
  const before = text.slice(0, caret)
  const start = before.lastIndexOf('[[')
  if (start < 0) return null
  const query = before.slice(start + 2)
  if (/[\]\[\n|]/.test(query) || query.length > 80) return null
  return { start, query }
}

/** Replaces the open link before the caret with a closed one; returns the new text and caret. */
export function completeLink(text: string, caret: number, name: string): { text: string; caret: number } {
  const open = openLink(text, caret)
  if (!open) return { text, caret }
  // a `]]` the person already typed after the caret is reused, not doubled
  const rest = text.slice(caret).startsWith(']]') ? text.slice(caret + 2) : text.slice(caret)
  const link = `[[${name}]]`
  return { text: text.slice(0, open.start) + link + rest, caret: open.start + link.length }
}

interface Token extends Span {
  word: string
}

function tokens(text: string): Token[] {
  const out: Token[] = []
  for (const m of text.matchAll(/[\p{L}\p{N}][\p{L}\p{N}'’&+#.\-]*/gu)) {
    // trailing punctuation ends a token, except the full stop of an initial ("J.")
    let word = m[0]
    while (/[.\-'’]$/.test(word) && !/^\p{Lu}\.$/u.test(word)) word = word.slice(0, -1)
    out.push({ start: m.index, end: m.index + word.length, word })
  }
  return out
}

const POSSESSIVE = /['’]s$/u
const MAX_WORDS = 6

/** Finds known names in text: one pass over word n-grams, so the cost does not grow with the memory. */
export class NameFinder {
  private readonly keys = new Map<string, { key: string; name: string }>()

  constructor(vocabulary: Pick<Vocabulary, 'entities' | 'aliases'>) {
    const names = new Map(vocabulary.entities.map((e) => [e.key, e.name]))
    for (const e of vocabulary.entities) this.keys.set(e.key, { key: e.key, name: e.name })
    for (const a of vocabulary.aliases) {
      const name = names.get(a.canonical)
      if (name && !this.keys.has(a.variant)) this.keys.set(a.variant, { key: a.canonical, name })
    }
  }

  get size(): number {
    return this.keys.size
  }

  lookup(name: string): { key: string; name: string } | undefined {
    return this.keys.get(normalizeName(name))
  }

  /** Longest match first, left to right; skipped spans (such as links) are never searched. */
  find(text: string, skip: Span[] = []): Mention[] {
    const toks = tokens(text).filter((t) => !skip.some((s) => t.start < s.end && t.end > s.start))
    const out: Mention[] = []
    for (let i = 0; i < toks.length; ) {
      let hit: Mention | undefined
      let used = 0
      for (let n = Math.min(MAX_WORDS, toks.length - i); n >= 1 && !hit; n--) {
        const first = toks[i]!
        const last = toks[i + n - 1]!
        // a multi-word name must not straddle a skipped span or a line
        const raw = text.slice(first.start, last.end)
        if (n > 1 && (/\n/.test(raw) || skip.some((s) => s.start >= first.start && s.end <= last.end))) continue
        for (const candidate of [raw, raw.replace(POSSESSIVE, '')]) {
          const key = normalizeName(candidate)
          // one- and two-letter names would be found in every note
          if (key.length < 3) continue
          const found = this.keys.get(key)
          if (found) {
            hit = { start: first.start, end: first.start + candidate.length, key: found.key, name: found.name, text: candidate }
            used = n
            break
          }
        }
      }
      if (hit) {
        out.push(hit)
        i += used
      } else i++
    }
    return out
  }
}

/** Small words that may sit inside a name ("Bank of England") but never start or end one. */
const JOINERS = new Set(['of', 'de', 'da', 'del', 'der', 'van', 'von', 'the', 'and', '&', 'la', 'le', 'du', 'di', 'bin', 'al'])
/** Capitalized words that start sentences or stand alone and are rarely names. */
const COMMON = new Set(
  'a an the this that these those it its i we you he she they my our your his her their me us them on in at to for from with by of and or but if when then after before today yesterday tomorrow met saw called asked told during while also mr mrs ms dr prof monday tuesday wednesday thursday friday saturday sunday january february march april may june july august september october november december'
    .split(' '),
)

const capitalized = (w: string): boolean => /^\p{Lu}/u.test(w) || /^\p{N}+\p{L}/u.test(w)

/**
 * Runs of capitalized words, as new-entity candidates. A lone capitalized word that starts a
 * sentence is left out: it is capitalized because of where it stands, not because it is a name.
 */
export function capitalizedPhrases(text: string, skip: Span[] = []): Phrase[] {
  const toks = tokens(text)
  const out: Phrase[] = []
  const sentenceStart = (t: Token): boolean => {
    const before = text.slice(0, t.start).replace(/[\s"'“‘(\[*_-]+$/u, '')
    return before === '' || /[.!?:\n]$/.test(before)
  }
  let i = 0
  while (i < toks.length) {
    const t = toks[i]!
    if (!capitalized(t.word) || COMMON.has(t.word.toLowerCase()) || skip.some((s) => t.start < s.end && t.end > s.start)) {
      i++
      continue
    }
    let j = i
    // extend over capitalized words, and over joiners followed by a capitalized word
    for (;;) {
      const next = toks[j + 1]
      if (!next || /[.!?,;:\n()]/.test(text.slice(toks[j]!.end, next.start))) break
      if (skip.some((s) => next.start < s.end && next.end > s.start)) break
      if (capitalized(next.word) && !COMMON.has(next.word.toLowerCase())) j++
      else if (JOINERS.has(next.word.toLowerCase()) && toks[j + 2] && capitalized(toks[j + 2]!.word) && !/[.!?,;:\n()]/.test(text.slice(next.end, toks[j + 2]!.start))) j += 2
      else break
    }
    const single = i === j
    if (!(single && sentenceStart(t))) {
      const phraseText = text.slice(t.start, toks[j]!.end).replace(POSSESSIVE, '')
      const key = normalizeName(phraseText)
      if (key.length >= 2) out.push({ start: t.start, end: t.start + phraseText.length, text: phraseText, key })
    }
    i = j + 1
  }
  return out
}

/** Sentence index of each offset, so relationships are offered between names of one sentence. */
export function sentenceOf(text: string): (offset: number) => number {
  const ends: number[] = []
  for (const m of text.matchAll(/[.!?]+(?=\s|$)|\n+/g)) ends.push(m.index)
  return (offset) => {
    let n = 0
    while (n < ends.length && ends[n]! < offset) n++
    return n
  }
}
