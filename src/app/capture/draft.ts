// A note being captured, read from its text: the entities it links, the names it could link,
// and the relationships worth offering between the linked ones.
import { normalizeName, normalizeType } from '../../core/normalize'
import type { EntityInput, RelationshipInput } from '../../core/types'
import { capitalizedPhrases, openSpans, plainText, sentenceOf, wikiLinks, type NameFinder } from './mentions'

export interface LinkedEntity {
  key: string
  /** As it will be written: the memory's name for a known entity, the text's for a new one. */
  name: string
  known: boolean
  /** Where it first appears, for ordering. */
  at: number
}

export interface Offer {
  key: string
  name: string
  known: boolean
}

export interface PairOffer {
  /** `${source}\u0000${target}` over keys, in the direction offered. */
  id: string
  source: LinkedEntity
  target: LinkedEntity
}

export interface DraftView {
  linked: LinkedEntity[]
  /** Names of known entities in the text that are not linked yet. */
  mentions: Offer[]
  /** Capitalized phrases that name nothing known yet. */
  phrases: Offer[]
  pairs: PairOffer[]
}

/** What the person decided beyond the text: names linked from the offers, offers set aside, pairs turned round. */
export interface Decisions {
  accepted: ReadonlySet<string>
  dismissed: ReadonlySet<string>
  reversed: ReadonlySet<string>
}

/**
 * What a note being edited already links: its entities stay linked (where the text names them,
 * else after it) until unlinked, and the pairs of its relationships are offered first, in their
 * direction, whatever sentences name them.
 */
export interface Kept {
  /** With the description the note gives each, when it gives one: shown, and editable, on its row. */
  entities: ReadonlyArray<{ key: string; name: string; description?: string }>
  /** [source key, target key] */
  pairs: ReadonlyArray<readonly [string, string]>
}

const NOTHING_KEPT: Kept = { entities: [], pairs: [] }

const MAX_PAIRS = 6
const MAX_OFFERS = 8

export function readDraft(text: string, finder: NameFinder, decisions: Decisions, kept: Kept = NOTHING_KEPT): DraftView {
  const links = wikiLinks(text)
  // a link still being typed is neither a mention nor a phrase yet
  const typing = openSpans(text)
  const mentions = finder.find(text, [...links, ...typing])
  const phrases = capitalizedPhrases(text, [...links, ...typing, ...mentions]).filter((p) => !finder.lookup(p.text))
  const linked = new Map<string, LinkedEntity>()
  const add = (key: string, name: string, known: boolean, at: number): void => {
    if (!linked.has(key)) linked.set(key, { key, name, known, at })
  }
  for (const l of links) {
    const found = finder.lookup(l.name)
    if (found) add(found.key, found.name, true, l.start)
    else add(normalizeName(l.name), l.name, false, l.start)
  }
  for (const m of mentions) if (decisions.accepted.has(m.key)) add(m.key, m.name, true, m.start)
  for (const p of phrases) if (decisions.accepted.has(p.key)) add(p.key, p.text, false, p.start)
  kept.entities.forEach((k, i) => {
    if (decisions.dismissed.has(k.key)) return
    const named = mentions.find((m) => m.key === k.key)
    add(k.key, finder.lookup(k.name)?.name ?? k.name, true, named ? named.start : text.length + i)
  })

  const offers = (list: Array<{ key: string; name: string; known: boolean }>): Offer[] => {
    const seen = new Set<string>()
    return list.filter((o) => !linked.has(o.key) && !decisions.dismissed.has(o.key) && !seen.has(o.key) && seen.add(o.key)).slice(0, MAX_OFFERS)
  }
  const ordered = [...linked.values()].sort((a, b) => a.at - b.at)
  const positions = new Map<string, number[]>()
  const note = (key: string, at: number): void => void positions.set(key, [...(positions.get(key) ?? []), at])
  for (const l of links) note(finder.lookup(l.name)?.key ?? normalizeName(l.name), l.start)
  for (const m of mentions) note(m.key, m.start)
  for (const p of phrases) note(p.key, p.start)
  return {
    linked: ordered,
    mentions: offers(mentions.map((m) => ({ key: m.key, name: m.name, known: true }))),
    phrases: offers(phrases.map((p) => ({ key: p.key, name: p.text, known: false }))),
    pairs: pairOffers(text, ordered, positions, decisions.reversed, kept.pairs),
  }
}

/**
 * Pairs of linked entities named in one sentence, in the order the text names them; an entity
 * that shares no sentence is paired with the one named just before it, so none is left unlinked.
 */
function pairOffers(text: string, linked: LinkedEntity[], positions: Map<string, number[]>, reversed: ReadonlySet<string>, keptPairs: Kept['pairs']): PairOffer[] {
  const sentence = sentenceOf(text)
  const sentences = new Map(linked.map((e) => [e.key, new Set((positions.get(e.key) ?? [e.at]).map(sentence))]))
  const out: PairOffer[] = []
  const paired = new Set<string>()
  const push = (a: LinkedEntity, b: LinkedEntity): void => {
    const undirected = [a.key, b.key].sort().join('\u0000')
    if (paired.has(undirected)) return
    paired.add(undirected)
    const forward = `${a.key}\u0000${b.key}`
    const [source, target] = reversed.has(forward) ? [b, a] : [a, b]
    out.push({ id: forward, source, target })
  }
  const byKey = new Map(linked.map((e) => [e.key, e]))
  for (const [s, t] of keptPairs) {
    const a = byKey.get(s)
    const b = byKey.get(t)
    if (a && b && a !== b) push(a, b)
  }
  const pinned = out.length
  for (let i = 0; i < linked.length; i++)
    for (let j = i + 1; j < linked.length; j++) {
      const a = sentences.get(linked[i]!.key)!
      if ([...sentences.get(linked[j]!.key)!].some((s) => a.has(s))) push(linked[i]!, linked[j]!)
    }
  for (let j = 1; j < linked.length; j++) {
    const b = linked[j]!
    if (![...paired].some((p) => p.split('\u0000').includes(b.key))) push(linked[j - 1]!, b)
  }
  // a relationship the note already holds is never cut from the offers
  return out.slice(0, Math.max(MAX_PAIRS, pinned))
}

/** A new entity's type and description: proposed from the text, or as the person typed them. */
export interface NewEntityFields {
  type: string
  description: string
}

/**
 * The entity and relationship lists of the write: known entities carry no description of their
 * own; a new one takes what the person typed over what was proposed (`proposed`), and a
 * description typed away to nothing falls back to the proposal, so it is never blank.
 */
export function draftGraph(
  view: DraftView,
  fields: ReadonlyMap<string, Partial<NewEntityFields>>,
  knownTypes: ReadonlyMap<string, string>,
  pairTypes: ReadonlyMap<string, string>,
  proposed: ReadonlyMap<string, NewEntityFields> = new Map(),
): { entities: EntityInput[]; relationships: RelationshipInput[] } {
  const entities = view.linked.map((e): EntityInput => {
    if (e.known) {
      const type = knownTypes.get(e.key)
      // the known type is repeated so this note does not give the entity the default type
      return { name: e.name, ...(type ? { type } : {}) } as EntityInput
    }
    const f = fields.get(e.key)
    const p = proposed.get(e.key)
    const description = f?.description?.trim() || p?.description.trim() || ''
    const type = (f?.type ?? p?.type ?? '').trim()
    return { name: e.name, description, ...(type ? { type } : {}) }
  })
  const relationships: RelationshipInput[] = []
  for (const p of view.pairs) {
    const type = pairTypes.get(p.id)?.trim()
    if (type && normalizeType(type)) relationships.push({ source: p.source.name, type, target: p.target.name })
  }
  return { entities, relationships }
}

export { plainText }

/** A title when the person gave none: the note's first line, cut at a word near 80 characters. */
export function titleFrom(text: string): string {
  const line = plainText(text).replace(/\[\[/g, '').trim().split('\n')[0]!.trim()
  const sentence = /^(.{12,}?[.!?])(\s|$)/.exec(line)?.[1] ?? line
  if (sentence.length <= 80) return sentence.replace(/[.]$/, '')
  const cut = sentence.slice(0, 80)
  const space = cut.lastIndexOf(' ')
  return `${(space > 40 ? cut.slice(0, space) : cut).trimEnd()}…`
}
