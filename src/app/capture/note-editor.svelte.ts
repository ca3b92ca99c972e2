// The capture editor's state, shared by the Capture screen and a note edited in place: the text,
// what the person decided about its links, the proposals for new names, and the write it makes.
import { normalizeName } from '../../core/normalize'
import type { Vocabulary } from '../../core/notes'
import type { EntityInput, RelationshipInput } from '../../core/types'
import { typeLabel } from '../parts/labels'
import { draftGraph, readDraft, type Kept, type NewEntityFields } from './draft'
import { NameFinder } from './mentions'
import { proposedDescription, TypeGuesser } from './proposals'
import type { Replacement } from './replaces'

const EMPTY_VOCABULARY: Vocabulary = { entities: [], aliases: [], relationshipTypes: [] }

export class NoteEditor {
  content = $state('')
  vocabulary = $state<Vocabulary>(EMPTY_VOCABULARY)
  /** The memory's single-valued relationship types (stored form). */
  singleValued = $state<string[]>([])
  accepted = $state(new Set<string>())
  dismissed = $state(new Set<string>())
  reversed = $state(new Set<string>())
  /** What the person typed for a new entity, part by part; a part left alone keeps its proposal. */
  fields = $state<Record<string, Partial<NewEntityFields>>>({})
  pairTypes = $state<Record<string, string>>({})
  /** What the note being edited links already (nothing on capture). */
  kept = $state<Kept>({ entities: [], pairs: [] })
  /** Notes the draft could replace, and those the person said it does (by slug). */
  replacements = $state<Replacement[]>([])
  replaces = $state(new Set<string>())

  readonly finder = $derived(new NameFinder(this.vocabulary))
  readonly draft = $derived(readDraft(this.content, this.finder, { accepted: this.accepted, dismissed: this.dismissed, reversed: this.reversed }, this.kept))
  readonly knownTypes = $derived(new Map(this.vocabulary.entities.map((e) => [e.key, e.type])))
  readonly relTypes = $derived(this.vocabulary.relationshipTypes.map((t) => typeLabel(t.type)))
  /** Entity types in use, most common first, offered for a new entity. */
  readonly entityTypes = $derived.by(() => {
    const counts = new Map<string, number>()
    for (const e of this.vocabulary.entities) counts.set(e.type, (counts.get(e.type) ?? 0) + 1)
    return [...counts].sort((a, b) => b[1] - a[1]).map(([t]) => typeLabel(t))
  })
  readonly guesser = $derived(new TypeGuesser(this.vocabulary.entities))
  /** Each new entity's proposal: the sentence naming it, and a type names like it have here. */
  readonly proposed = $derived(
    new Map<string, NewEntityFields>(
      this.draft.linked
        .filter((e) => !e.known)
        .map((e) => [e.key, { type: this.guesser.guess(e.name), description: proposedDescription(this.content, e.at, e.name, `Named in the note “${this.title()}”`) }]),
    ),
  )
  /** The entities and relationships the draft writes. */
  readonly graph = $derived(draftGraph(this.draft, new Map(Object.entries(this.fields)), this.knownTypes, new Map(Object.entries(this.pairTypes)), this.proposed))
  /** What the note being edited says of each of its entities it describes, by key. */
  readonly keptDescriptions = $derived(new Map(this.kept.entities.filter((e) => e.description).map((e) => [e.key, e.description!])))
  /** Descriptions the person typed for the note's own entities, by key. */
  readonly described = $derived(
    new Map(Object.entries(this.fields).flatMap(([key, f]) => (this.keptDescriptions.has(key) && f.description !== undefined ? [[key, f.description] as const] : []))),
  )
  /** Offers the person can still accept: those of the draft as it is now. */
  readonly offeredSlugs = $derived(new Set(this.replacements.map((r) => r.slug)))
  /** What the write supersedes: accepted offers the draft still makes. */
  readonly supersedes = $derived([...this.replaces].filter((s) => this.offeredSlugs.has(s)))

  /** @param title the note's title as it will be saved, for a proposal's fallback */
  constructor(private readonly title: () => string) {}

  /** An entity name's key here, through merges. */
  keyOf = (name: string): string => this.finder.lookup(name)?.key ?? normalizeName(name)

  setField(key: string, part: keyof NewEntityFields, value: string): void {
    this.fields[key] = { ...this.fields[key], [part]: value }
  }
  link(key: string): void {
    this.accepted = new Set([...this.accepted, key])
  }
  linkAllKnown(): void {
    this.accepted = new Set([...this.accepted, ...this.draft.mentions.map((m) => m.key)])
  }
  unlink(key: string): void {
    this.accepted = new Set([...this.accepted].filter((k) => k !== key))
    // a [[link]] is undone in the text itself, leaving the words it showed
    this.content = this.content.replace(/\[\[([^\[\]|\n]+)(?:\|([^\[\]\n]+))?\]\]/g, (all, name: string, shown?: string) => (this.keyOf(name) === key ? (shown ?? name) : all))
    this.dismissed = new Set([...this.dismissed, key])
  }
  turn(id: string): void {
    const next = new Set(this.reversed)
    if (next.has(id)) next.delete(id)
    else next.add(id)
    this.reversed = next
  }
  toggleReplaces(slug: string): void {
    const next = new Set(this.replaces)
    if (next.has(slug)) next.delete(slug)
    else next.add(slug)
    this.replaces = next
  }

  /** Starts over from `content`, keeping what `kept` and `pairTypes` say a note already links. */
  reset(content = '', kept: Kept = { entities: [], pairs: [] }, pairTypes: Record<string, string> = {}): void {
    this.content = content
    this.accepted = new Set()
    this.dismissed = new Set()
    this.reversed = new Set()
    this.fields = {}
    this.pairTypes = pairTypes
    this.kept = kept
    this.replacements = []
    this.replaces = new Set()
  }
}

export type DraftedGraph = { entities: EntityInput[]; relationships: RelationshipInput[] }
