// One workload for every system: WordNet noun synsets as entities (name, type, gloss), grouped ten to
// an observation whose text mentions them, chained by relations inside the group plus one link back
// to an earlier group so the graph is connected across notes.
import { readNounSynsets, type Synset } from '../../../scripts/eval/wordnet'
import { normalizeName } from '../../../src/core/normalize'

export interface PeerEntity {
  name: string
  type: string
  description: string
}

export interface PeerRelation {
  from: string
  type: string
  to: string
}

export interface PeerNote {
  title: string
  content: string
  entities: PeerEntity[]
  relations: PeerRelation[]
}

export interface PeerQuery {
  kind: 'name' | 'synonym' | 'keywords' | 'sentence'
  text: string
}

export interface PeerWorkload {
  notes: PeerNote[]
  entities: PeerEntity[]
  relations: PeerRelation[]
  queries: PeerQuery[]
  /** The three queries whose answers are reported side by side. */
  samples: PeerQuery[]
}

export const PER_NOTE = 10
const RELATION_TYPES = ['related_to', 'part_of', 'used_by', 'kind_of']

let synsetCache: Synset[] | undefined

export function peerWorkload(entityCount: number, queryCount = 100): PeerWorkload {
  const synsets = (synsetCache ??= readNounSynsets())
  const used = new Set<string>()
  const entities: PeerEntity[] = []
  const picked: Synset[] = []
  for (let i = 0; i < entityCount; i++) {
    const s = synsets[i % synsets.length]!
    const round = Math.floor(i / synsets.length)
    // names must be unique, under Cairn's normalization too ("'hood" and "hood" are one key),
    // so every system stores the same number of entities
    let name = s.lemmas[0]!
    if (used.has(normalizeName(name))) name = `${name} ${s.offset}${round ? `-${round}` : ''}`
    used.add(normalizeName(name))
    entities.push({ name, type: s.lexname, description: s.definition })
    picked.push(s)
  }
  const notes: PeerNote[] = []
  const relations: PeerRelation[] = []
  for (let g = 0; g * PER_NOTE < entityCount; g++) {
    const group = entities.slice(g * PER_NOTE, (g + 1) * PER_NOTE)
    const rels: PeerRelation[] = []
    for (let j = 1; j < group.length; j++) rels.push({ from: group[j - 1]!.name, type: RELATION_TYPES[(g + j) % RELATION_TYPES.length]!, to: group[j]!.name })
    const back = g > 0 ? entities[earlierGroup(g) * PER_NOTE]! : undefined
    if (back) rels.push({ from: group[0]!.name, type: 'related_to', to: back.name })
    const examples = picked.slice(g * PER_NOTE, (g + 1) * PER_NOTE).flatMap((s) => s.examples.slice(0, 1))
    const content = `Discussed ${group.map((e) => e.name).join(', ')}. ${examples.join('. ')}`.slice(0, 1_500)
    // the back link may name an entity of an earlier note: it must appear here too for Cairn's contract
    const linked = back ? [back] : []
    notes.push({ title: `Note ${g}`, content, entities: [...group, ...linked], relations: rels })
    relations.push(...rels)
  }
  const queries: PeerQuery[] = []
  for (let q = 0; queries.length < queryCount; q++) {
    const i = (q * 7919 + 13) % entityCount
    const s = picked[i]!
    const kind = (['name', 'synonym', 'keywords', 'sentence'] as const)[q % 4]!
    if (kind === 'name') queries.push({ kind, text: s.lemmas[0]! })
    else if (kind === 'synonym') queries.push({ kind, text: s.lemmas[s.lemmas.length - 1]! })
    else if (kind === 'keywords') queries.push({ kind, text: keywords(s.definition) })
    else queries.push({ kind, text: s.examples[0] ?? s.definition })
  }
  // a name, a synonym of an entity whose stored name differs, and two words of a description
  const withSynonym = picked.find((s) => s.lemmas.length > 1) ?? picked[0]!
  const samples: PeerQuery[] = [
    { kind: 'name', text: picked[Math.floor(entityCount / 2)]!.lemmas[0]! },
    { kind: 'synonym', text: withSynonym.lemmas[withSynonym.lemmas.length - 1]! },
    { kind: 'keywords', text: keywords(picked[Math.floor(entityCount / 3)]!.definition) },
  ]
  return { notes, entities, relations, queries, samples }
}

/**
 * A pseudo-random earlier group for group g > 0. A multiplicative hash, not (g * c) % g, which is
 * always 0 and would hang every note on the first entity: one hub that each write re-derives.
 */
export function earlierGroup(g: number): number {
  return (Math.imul(g, 2654435761) >>> 0) % g
}

/** The first and last long words of a description, as a person half-remembers it. */
function keywords(definition: string): string {
  const words = definition.toLowerCase().match(/[a-z]{5,}/g) ?? [definition]
  return words.length > 1 ? `${words[0]} ${words[words.length - 1]}` : words[0]!
}
