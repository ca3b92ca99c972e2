// The conversational task: LoCoMo conversations turned into the writes an agent would make
// (one observation per session fact, `source` = its dialog ids) and questions whose evidence
// is those dialog ids. Read by path from outside the repository (CC BY-NC 4.0: never shipped).

import { readFileSync } from 'node:fs'

export interface LocomoQuestion {
  question: string
  category: number
  evidence: string[]
}

export interface LocomoConversation {
  sampleId: string
  speakers: string[]
  writes: Array<Record<string, unknown> & { title: string; content: string; source: string }>
  questions: LocomoQuestion[]
}

export interface LocomoSet {
  source: string
  conversations: LocomoConversation[]
}

export function readLocomo(path: string): LocomoSet {
  const raw = JSON.parse(readFileSync(path, 'utf8')) as LocomoSet
  if (!Array.isArray(raw?.conversations)) throw new Error(`${path} is not a LoCoMo writes-and-questions file (no conversations array)`)
  return raw
}

/** The dialog ids one observation carries (a fact may come from several turns). */
export function dialogIds(source: string | undefined): string[] {
  return (source ?? '').split(',').map((s) => s.trim()).filter(Boolean)
}

/**
 * Evidence recall@k: the share of a question's evidence dialog ids carried by the first k
 * observations; nDCG@k counts an observation relevant when it carries any evidence id.
 */
export function evidenceScores(sources: string[][], evidence: readonly string[], k: number): { recall: number; ndcg: number } {
  const wanted = new Set(evidence)
  const found = new Set<string>()
  let dcg = 0
  sources.slice(0, k).forEach((ids, i) => {
    let relevant = false
    for (const id of ids) {
      if (wanted.has(id)) {
        found.add(id)
        relevant = true
      }
    }
    if (relevant) dcg += 1 / Math.log2(i + 2)
  })
  let ideal = 0
  for (let i = 0; i < Math.min(k, wanted.size); i++) ideal += 1 / Math.log2(i + 2)
  return { recall: wanted.size ? found.size / wanted.size : 0, ndcg: ideal ? dcg / ideal : 0 }
}
