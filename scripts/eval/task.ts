// The retrieval task built from WordNet noun synsets. Each synset in a fixed sample is an
// entity: name = its first lemma, type = its lexicographer file, description = its definition,
// retrieval queries = its usage examples. The other lemmas are never indexed. Two query sets,
// relevance taken from WordNet itself:
//  - synonym: a non-first lemma (not any entity's name); relevant = every sampled synset listing it.
//  - usage: a held-out usage example with the synset's own lemmas masked; relevant = that synset.
// Dev and test queries come from disjoint targets, picked by hash.

import type { EntityDoc } from '../../src/search/entity-index'
import type { Synset } from './wordnet'

export interface EvalQuery {
  kind: 'synonym' | 'usage'
  text: string
  relevant: string[]
}

export interface EvalTask {
  docs: EntityDoc[]
  dev: EvalQuery[]
  test: EvalQuery[]
}

export interface TaskOptions {
  /** One synset in `sample` is kept (by hash of its offset). */
  sample: number
  /** Queries per kind in each split, at most. */
  devPerKind: number
  testPerKind: number
  /** Stored usage examples per entity, at most. */
  maxQueries: number
}

export const DEFAULT_TASK: TaskOptions = { sample: 4, devPerKind: 250, testPerKind: 500, maxQueries: 2 }

/** FNV-1a, so the sample and the splits are the same on every machine. */
export function hash32(text: string): number {
  let h = 2166136261
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619)
  return h >>> 0
}

const words = (text: string) => text.toLowerCase().match(/[\p{L}\p{N}]+(?:['-][\p{L}\p{N}]+)*/gu) ?? []

/** Removes the synset's own lemma words and their inflections ("kill" also hides "kills", "killed"). */
export function maskLemmas(example: string, lemmas: readonly string[]): string {
  const hidden = new Set(lemmas.flatMap(words))
  const isHidden = (w: string) => hidden.has(w) || [...hidden].some((h) => h.length >= 3 && w.startsWith(h) && w.length - h.length <= 3)
  return example.split(/\s+/).filter((token) => !words(token).some(isHidden)).join(' ')
}

export function buildTask(synsets: readonly Synset[], opts: TaskOptions = DEFAULT_TASK): EvalTask {
  const sampled = synsets.filter((s) => hash32(`sample:${s.offset}`) % opts.sample === 0)
  const split = (id: string): 'dev' | 'test' => (hash32(`split:${id}`) % 3 === 0 ? 'dev' : 'test')
  const keyOf = (s: Synset) => `${s.lemmas[0]!.toLowerCase()}#${s.offset}`

  // usage targets: synsets with an example that still says something once its lemmas are masked
  const heldOut = new Map<string, string>()
  const usage: Record<'dev' | 'test', EvalQuery[]> = { dev: [], test: [] }
  for (const s of sampled) {
    const example = s.examples[s.examples.length - 1]
    if (!example) continue
    const text = maskLemmas(example, s.lemmas)
    if (words(text).length < 3) continue
    heldOut.set(s.offset, example)
    usage[split(s.offset)].push({ kind: 'usage', text, relevant: [keyOf(s)] })
  }

  const docs: EntityDoc[] = sampled.map((s) => ({
    key: keyOf(s),
    name: s.lemmas[0]!,
    type: s.lexname,
    description: s.definition,
    queries: s.examples.filter((e) => e !== heldOut.get(s.offset)).slice(0, opts.maxQueries),
  }))

  // synonym targets: lemmas that are no entity's name
  const names = new Set(docs.map((d) => d.name.toLowerCase()))
  const listing = new Map<string, string[]>()
  for (const s of sampled) {
    for (const lemma of s.lemmas.slice(1)) {
      const w = lemma.toLowerCase()
      if (names.has(w)) continue
      listing.set(w, [...(listing.get(w) ?? []), keyOf(s)])
    }
  }
  const synonym: Record<'dev' | 'test', EvalQuery[]> = { dev: [], test: [] }
  for (const [w, relevant] of listing) synonym[split(w)].push({ kind: 'synonym', text: w, relevant: [...new Set(relevant)].sort() })

  const pick = (queries: EvalQuery[], n: number) => [...queries].sort((a, b) => hash32(`pick:${a.text}`) - hash32(`pick:${b.text}`) || (a.text < b.text ? -1 : 1)).slice(0, n)
  return {
    docs,
    dev: [...pick(synonym.dev, opts.devPerKind), ...pick(usage.dev, opts.devPerKind)],
    test: [...pick(synonym.test, opts.testPerKind), ...pick(usage.test, opts.testPerKind)],
  }
}
