// The whole-word index the search indexes used before their postings index (src/search/
// postings-index.ts), kept as the reference its scores are checked against.
//
// An Orama index component whose full-text search matches whole words only. Orama's default
// treats each query word as a prefix and gathers the matching postings with a de-duplicating
// list scan that is quadratic in their length: a query with "the" or "of" took 100-700 ms at
// 20k entities. Here each query token is looked up exactly in the radix tree and its posting
// set is scored with Orama's own BM25. Insertion, removal and persistence stay Orama's.

import { components } from '@orama/orama'
import type { radix } from '@orama/orama/trees'

type RadixNode = radix.RadixNode
type OramaIndex = components.index.Index
const base = components.index.createIndex()

/** The node that ends exactly at `word`, or undefined. */
function exactNode(root: RadixNode, word: string): RadixNode | undefined {
  let node = root
  let i = 0
  while (i < word.length) {
    const child = node.c.get(word[i]!)
    if (!child || !word.startsWith(child.s, i)) return undefined
    node = child
    i += child.s.length
  }
  return node.e && node.w === word ? node : undefined
}

/** Share of the documents above which a word counts as common (its BM25 idf is then under 0.11). */
const COMMON_SHARE = 0.9

export const wholeWordIndex: typeof base = {
  ...base,
  // any-word (OR) matching; the `exact`, `tolerance` and `threshold` arguments do not apply
  search(index, term, tokenizer, language, properties, _exact, _tolerance, boost, relevance, docsCount, whereFiltersIDs) {
    const tokens = tokenizer.tokenize(term, language)
    const scores = new Map<number, number>()
    for (const prop of properties) {
      const tree = (index as unknown as OramaIndex).indexes[prop]
      if (!tree || tree.type !== 'Radix') continue
      const idx = index as unknown as OramaIndex
      const lengths = idx.fieldLengths[prop] as Record<number, number>
      const frequencies = idx.frequencies[prop] as Record<number, Record<string, number> | undefined>
      const occurrences = idx.tokenOccurrences[prop] as Record<string, unknown>
      const average = idx.avgFieldLength[prop] as number
      const weight = (boost as Record<string, number>)[prop] ?? 1
      const { k, b, d } = relevance as { k: number; b: number; d: number }
      const nodes = [...new Set(tokens)].map((token) => ({ token, node: exactNode(tree.node as RadixNode, token) })).filter((t) => t.node && t.node.d.size > 0)
      // A word in nearly every document (a memory's owner, named in all its notes) weighs under a
      // hundredth of a rare one and costs a pass over every document: when the query has a rarer
      // word, such words are left out. Decided from the index alone, so every device agrees.
      const common = (n: number) => n > COMMON_SHARE * docsCount
      const rarer = nodes.some((t) => !common(t.node!.d.size))
      for (const { token, node } of nodes) {
        if (!node || (rarer && common(node.d.size))) continue
        // Orama's own BM25, as its calculateResultScores computes it, without the per-document
        // map of matched keywords it also keeps (unused here): a word in every note of a large
        // memory made that bookkeeping most of a query's cost
        const matching = typeof occurrences[token] === 'number' ? (occurrences[token] as number) : 0
        const idf = Math.log(1 + (docsCount - matching + 0.5) / (matching + 0.5))
        for (const id of node.d as Set<number>) {
          if (whereFiltersIDs && !whereFiltersIDs.has(id)) continue
          const tf = frequencies?.[id]?.[token] ?? 0
          const bm25 = (idf * (d + tf * (k + 1))) / (tf + k * (1 - b + (b * lengths[id]!) / average))
          scores.set(id, (scores.get(id) ?? 0) + bm25 * weight)
        }
      }
    }
    return [...scores].sort((a, b) => b[1] - a[1])
  },
}
