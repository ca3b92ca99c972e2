// Name normalization: the same name written twice resolves to one entity.

const SURROUNDING_PUNCTUATION = /^[\p{P}\p{S}\s]+|[\p{P}\p{S}\s]+$/gu

const memo = new Map<string, string>()
const MEMO_LIMIT = 100_000

/** NFKC, case-folded, whitespace collapsed, surrounding punctuation trimmed. */
export function normalizeName(name: string): string {
  // names repeat across observations and every derivation asks again: remember recent answers
  const hit = memo.get(name)
  if (hit !== undefined) return hit
  if (memo.size >= MEMO_LIMIT) memo.clear()
  const key = computeNormalizedName(name)
  memo.set(name, key)
  return key
}

function computeNormalizedName(name: string): string {
  return name
    .normalize('NFKC')
    .toLowerCase()
    .replace(/\s+/gu, ' ')
    .replace(SURROUNDING_PUNCTUATION, '')
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
