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

export const wholeWordIndex: typeof base = {
  ...base,
  // any-word (OR) matching; the `exact`, `tolerance` and `threshold` arguments do not apply
  search(index, term, tokenizer, language, properties, _exact, _tolerance, boost, relevance, docsCount, whereFiltersIDs) {
    const tokens = tokenizer.tokenize(term, language)
    const scores = new Map<number, number>()
    const matches = new Map<number, Map<string, number>>()
    for (const prop of properties) {
      const tree = (index as unknown as OramaIndex).indexes[prop]
      if (!tree || tree.type !== 'Radix') continue
      for (const token of new Set(tokens)) {
        const node = exactNode(tree.node as RadixNode, token)
        if (!node || node.d.size === 0) continue
        base.calculateResultScores(index as unknown as OramaIndex, prop, token, [...node.d], docsCount, relevance, scores, (boost as Record<string, number>)[prop] ?? 1, whereFiltersIDs, matches)
      }
    }
    return [...scores].sort((a, b) => b[1] - a[1])
  },
}
