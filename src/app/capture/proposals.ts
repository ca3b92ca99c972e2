// What a new name is given when the person types nothing for it: a description proposed from the
// sentence that names it, and a type guessed from the types the memory already gives names like it.
import { DEFAULT_ENTITY_TYPE } from '../../core/contract'
import type { Vocabulary } from '../../core/notes'
import { plainText } from './mentions'

/** A proposed description stays a line a person reads at a glance; a longer sentence is cut at a word. */
const DESCRIPTION_CHARS = 160

/**
 * The sentence of `text` around `offset`, as saved (links read as their words), cut near
 * DESCRIPTION_CHARS; `fallback` when that sentence is only the name itself or empty, so a
 * proposal is never blank.
 */
export function proposedDescription(text: string, offset: number, name: string, fallback: string): string {
  let start = 0
  let end = text.length
  for (const m of text.matchAll(/[.!?]+(?=\s|$)|\n+/g)) {
    const stop = m.index + m[0].length
    if (stop <= offset) start = stop
    else if (m.index >= offset) {
      end = /\n/.test(m[0]) ? m.index : stop
      break
    }
  }
  const sentence = plainText(text.slice(start, end)).replace(/\s+/g, ' ').trim()
  // a sentence that is the name alone describes nothing
  if (sentence.replace(/[.!?]+$/, '').trim().toLowerCase() === name.trim().toLowerCase() || !sentence) return fallback
  if (sentence.length <= DESCRIPTION_CHARS) return sentence
  const cut = sentence.slice(0, DESCRIPTION_CHARS)
  const space = cut.lastIndexOf(' ')
  return `${(space > DESCRIPTION_CHARS / 2 ? cut.slice(0, space) : cut).trimEnd()}…`
}

const wordsOf = (name: string): string[] => name.toLowerCase().split(/\s+/).filter(Boolean)

/**
 * Guesses a new name's type from the memory's own: the type most given to known names ending in
 * the same word ("Harbor Clinic" makes "Dental Clinic" an organization), else to those starting
 * with it ("Amara Okafor" makes "Amara Chen" a person); '' (the default) when none does.
 */
export class TypeGuesser {
  private readonly byLast = new Map<string, Map<string, number>>()
  private readonly byFirst = new Map<string, Map<string, number>>()

  constructor(entities: Vocabulary['entities']) {
    const count = (index: Map<string, Map<string, number>>, word: string, type: string): void => {
      let types = index.get(word)
      if (!types) index.set(word, (types = new Map()))
      types.set(type, (types.get(type) ?? 0) + 1)
    }
    for (const e of entities) {
      if (!e.type || e.type === DEFAULT_ENTITY_TYPE) continue
      const words = wordsOf(e.name)
      if (words.length < 2) continue
      count(this.byLast, words[words.length - 1]!, e.type)
      count(this.byFirst, words[0]!, e.type)
    }
  }

  guess(name: string): string {
    const words = wordsOf(name)
    if (words.length === 0) return ''
    const best = (types: Map<string, number> | undefined): string => {
      let out = ''
      let most = 0
      // the most given; a tie to the first by text, so every device guesses alike
      for (const [type, n] of types ?? []) if (n > most || (n === most && type < out)) [out, most] = [type, n]
      return out
    }
    return best(this.byLast.get(words[words.length - 1]!)) || (words.length > 1 ? best(this.byFirst.get(words[0]!)) : '')
  }
}
