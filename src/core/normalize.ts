// Name normalization: the same name written twice resolves to one entity.

/** Punctuation, symbols and spaces: what may be trimmed from a name's ends. */
const TRIMMABLE = /[\p{P}\p{S}\s]/u
const LETTER_OR_DIGIT = /[\p{L}\p{N}]/u
/** Symbols that are part of a name when they open it before a letter or digit: .NET, -1, +1, $5, #rust, @ana. */
const MEANINGFUL_START = /[.\-+$#@€£¥&~]/u
/** Symbols that are part of a name when they close it: C++, C#, F#, 50%, A+. A closing period is not: "Corp." = "corp". */
const MEANINGFUL_END = /[+#%$]/u

const memo = new Map<string, string>()
const MEMO_LIMIT = 100_000

/**
 * NFKC, case-folded, whitespace collapsed, and the punctuation that wraps a name trimmed
 * (quotes, brackets, a closing period or comma), keeping symbols that carry meaning, so
 * `C++`, `C#` and `C` stay three names, as do `.NET` and `NET`, `+1` and `-1`.
 */
export function normalizeName(name: string): string {
  // names repeat across observations and every derivation asks again: remember recent answers
  const hit = memo.get(name)
  if (hit !== undefined) return hit
  if (memo.size >= MEMO_LIMIT) memo.clear()
  const key = computeNormalizedName(name)
  memo.set(name, key)
  return key
}

function folded(name: string): string {
  return name.normalize('NFKC').toLowerCase().replace(/\s+/gu, ' ')
}

function computeNormalizedName(name: string): string {
  const chars = [...folded(name)]
  let start = 0
  let end = chars.length
  const kept = (c: string | undefined, pattern: RegExp) => c !== undefined && (LETTER_OR_DIGIT.test(c) || pattern.test(c))
  while (start < end && TRIMMABLE.test(chars[start]!) && !(MEANINGFUL_START.test(chars[start]!) && kept(chars[start + 1], MEANINGFUL_START))) start++
  while (end > start && TRIMMABLE.test(chars[end - 1]!) && !(MEANINGFUL_END.test(chars[end - 1]!) && kept(chars[end - 2], MEANINGFUL_END))) end--
  const key = chars.slice(start, end).join('').trim()
  // a name of symbols alone names nothing
  return LETTER_OR_DIGIT.test(key) ? key : ''
}

const LEGACY_SURROUNDING = /^[\p{P}\p{S}\s]+|[\p{P}\p{S}\s]+$/gu

/**
 * The key earlier versions gave a name (every surrounding symbol trimmed). Merges recorded
 * under such a key keep applying to the names they were made for.
 */
export function legacyNameKey(name: string): string {
  return folded(name).replace(LEGACY_SURROUNDING, '')
}

/** Relationship and entity types: like names, with inner spaces and dashes as underscores. */
export function normalizeType(type: string): string {
  return normalizeName(type).replace(/[\s-]+/gu, '_')
}

/** Words of a text for comparisons (not for ranking: Orama tokenizes for BM25). */
export function words(text: string): string[] {
  return text
    .normalize('NFKC')
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((w) => w.length > 0)
}

/** Two descriptions differ materially when their words differ, not just case, spacing or punctuation. */
export function descriptionsDiffer(a: string, b: string): boolean {
  return words(a).join(' ') !== words(b).join(' ')
}

export function relationshipKey(source: string, type: string, target: string): string {
  return `${source}\u0000${type}\u0000${target}`
}
