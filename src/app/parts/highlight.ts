// Splits a text into runs that are or are not one of the given words, so a screen can mark the
// words a search matched without building HTML from note text.

export interface TextRun {
  text: string
  hit: boolean
}

/** `text` as runs; a run is a hit where it is one of `words` as a whole word (case as written). */
export function highlightRuns(text: string, words: readonly string[]): TextRun[] {
  const wanted = words.filter(Boolean)
  if (!wanted.length || !text) return [{ text, hit: false }]
  const escaped = [...wanted].sort((a, b) => b.length - a.length).map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
  const pattern = new RegExp(`(?<![\\p{L}\\p{N}])(${escaped.join('|')})(?![\\p{L}\\p{N}])`, 'gu')
  const runs: TextRun[] = []
  let at = 0
  for (const m of text.matchAll(pattern)) {
    if (m.index > at) runs.push({ text: text.slice(at, m.index), hit: false })
    runs.push({ text: m[0], hit: true })
    at = m.index + m[0].length
  }
  if (at < text.length) runs.push({ text: text.slice(at), hit: false })
  return runs
}
