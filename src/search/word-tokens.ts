// Word tokenization matching the GloVe 6B corpus (lowercased, punctuation split off,
// clitics such as "n't" and "'s" separate). Shared by `scripts/build-model.ts` and the
// static embedder, so the vocabulary and the runtime agree on what a token is.

/** Version of these rules; part of the static model's manifest. */
export const WORD_TOKENIZER = 'cairn-words@1'

// A run of letters/digits, joined across internal hyphens, apostrophes, periods, ampersands
// and digit-group commas ("e-mail", "o'brien", "u.s", "at&t", "1,000"), plus one optional
// trailing period so abbreviations like "u.s." can match the vocabulary.
const WORD = /[\p{L}\p{M}\p{N}]+(?:(?:[-'.&]|(?<=\p{N}),(?=\p{N}))[\p{L}\p{M}\p{N}]+)*\.?/gu

const CLITICS = new Set(["n't", "'s", "'re", "'ll", "'ve", "'d", "'m", "'"])

/** Lowercased candidate words of a text, in order; punctuation is dropped. */
export function wordTokens(text: string): string[] {
  const normalized = text.normalize('NFKC').toLowerCase().replace(/[\u2018\u2019\u02bc]/g, "'")
  return normalized.match(WORD) ?? []
}

/** Whether the tokenizer can emit `word` as one vocabulary entry (used to pick the vocabulary). */
export function isReachableWord(word: string): boolean {
  if (CLITICS.has(word)) return true
  const tokens = wordTokens(word)
  return tokens.length === 1 && tokens[0] === word
}

/**
 * Maps one candidate word to vocabulary entries: the word itself when known, otherwise
 * progressively smaller pieces (no trailing period, clitics split, then split on separators).
 * Unknown pieces are dropped.
 */
export function vocabularyPieces(word: string, has: (entry: string) => boolean): string[] {
  if (has(word)) return [word]
  if (word.endsWith('.') && word.length > 1) return vocabularyPieces(word.slice(0, -1), has)
  const clitic = splitClitic(word)
  if (clitic) return [...vocabularyPieces(clitic[0], has), ...(has(clitic[1]) ? [clitic[1]] : [])]
  const parts = word.split(/[-'.&,]/).filter((part) => part.length > 0)
  if (parts.length > 1) return parts.flatMap((part) => vocabularyPieces(part, has))
  return []
}

function splitClitic(word: string): [string, string] | undefined {
  if (word.endsWith("n't") && word.length > 3) return [word.slice(0, -3), "n't"]
  const at = word.lastIndexOf("'")
  if (at <= 0) return undefined
  const tail = word.slice(at)
  return CLITICS.has(tail) ? [word.slice(0, at), tail] : undefined
}
