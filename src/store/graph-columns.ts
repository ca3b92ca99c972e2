// The derived graph saved as columns for the open state. As JSON, 100,000 entities and 200,000
// edges are 60 MB of text whose parse alone takes most of a second; most of it repeats: every
// edge spells its key and both ends, every backing list spells its notes' slugs. Here names are
// stored once and referred to by number, and numbers travel as typed arrays, which IndexedDB
// hands back as one copy.
import { relationshipKey } from '../core/normalize'
import type { DormantBacking, DormantEdge } from '../core/graph'
import { SavedEdges } from '../core/saved-edges'
import type { Entity, Relationship } from '../core/types'

export interface GraphColumns {
  /** JSON array: the entity keys in order, then any edge end that is not an entity. */
  names: string
  entityCount: number
  /** JSON arrays, one entry per entity. */
  entityNames: string
  entityDescriptions: string
  /** JSON array of the distinct entity and edge types; the columns below number into it. */
  types: string
  entityTypes: Uint32Array
  entityDegrees: Float64Array
  /** JSON array of [entity, descriptions, queries] for entities whose lists are not empty. */
  entityLists: string
  /** Backing notes, as numbers into the notes' slugs: how many each has, then all in order. */
  entityNoteCounts: Uint32Array
  entityNotes: Uint32Array
  edgeSources: Uint32Array
  edgeTargets: Uint32Array
  edgeTypes: Uint32Array
  edgeWeights: Float64Array
  /** JSON array of [edge, description] for edges with a description. */
  edgeDescriptions: string
  edgeNoteCounts: Uint32Array
  edgeNotes: Uint32Array
  /**
   * JSON arrays of the keys that were not live, with their notes: [key, notes] per entity and
   * [source, type, target, notes] per edge (see `DormantBacking`). Absent in older saves, whose
   * first change after an open files every note.
   */
  dormantEntities?: string
  dormantEdges?: string
}

/** A numbering of strings in first-seen order. */
class Numbering {
  readonly list: string[] = []
  private readonly at = new Map<string, number>()
  of(s: string): number {
    let n = this.at.get(s)
    if (n === undefined) {
      n = this.list.length
      this.list.push(s)
      this.at.set(s, n)
    }
    return n
  }
  has(s: string): boolean {
    return this.at.has(s)
  }
}

/**
 * The graph as columns, its backing notes numbered by `slugs`. Undefined when the columns could
 * not give the same graph back (a backing note that is not among `slugs`, an edge whose key is
 * not made of its ends, a key listed twice): the caller then saves no state.
 */
export function packGraph(slugs: readonly string[], entities: Iterable<Entity>, relationships: Iterable<Relationship>, dormant?: DormantBacking): GraphColumns | undefined {
  const slugAt = new Map<string, number>()
  slugs.forEach((s, i) => slugAt.set(s, i))
  const names = new Numbering()
  const types = new Numbering()
  const es = [...entities]
  const rs = [...relationships]
  for (const e of es) {
    if (names.has(e.key)) return undefined
    names.of(e.key)
  }
  const notesOf = (lists: readonly (readonly string[])[]) => {
    const counts = new Uint32Array(lists.length)
    let total = 0
    for (const list of lists) total += list.length
    const notes = new Uint32Array(total)
    let at = 0
    for (let i = 0; i < lists.length; i++) {
      const list = lists[i]!
      counts[i] = list.length
      for (const slug of list) {
        const n = slugAt.get(slug)
        if (n === undefined) return undefined
        notes[at++] = n
      }
    }
    return { counts, notes }
  }
  const entityNotes = notesOf(es.map((e) => e.observations))
  const edgeNotes = notesOf(rs.map((r) => r.observations))
  if (!entityNotes || !edgeNotes) return undefined
  const entityLists: [number, string[], string[]][] = []
  es.forEach((e, i) => {
    if (e.descriptions.length || e.queries.length) entityLists.push([i, e.descriptions, e.queries])
  })
  const edgeDescriptions: [number, string][] = []
  const edgeKeys = new Set<string>()
  for (let i = 0; i < rs.length; i++) {
    const r = rs[i]!
    if (r.key !== relationshipKey(r.source, r.type, r.target) || edgeKeys.has(r.key)) return undefined
    edgeKeys.add(r.key)
    if (r.description) edgeDescriptions.push([i, r.description])
  }
  let dormantColumns: Pick<GraphColumns, 'dormantEntities' | 'dormantEdges'> = {}
  if (dormant) {
    const numbered = (list: readonly string[]) => {
      const out: number[] = new Array(list.length)
      for (let i = 0; i < list.length; i++) {
        const n = slugAt.get(list[i]!)
        if (n === undefined) return undefined
        out[i] = n
      }
      return out
    }
    const des: [string, number[]][] = []
    for (const [k, list] of dormant.entities) {
      const notes = numbered(list)
      if (!notes || names.has(k)) return undefined
      des.push([k, notes])
    }
    const drs: [string, string, string, number[]][] = []
    for (const [k, r] of dormant.edges) {
      const notes = numbered(r.observations)
      if (!notes || k !== relationshipKey(r.source, r.type, r.target) || edgeKeys.has(k)) return undefined
      drs.push([r.source, r.type, r.target, notes])
    }
    dormantColumns = { dormantEntities: JSON.stringify(des), dormantEdges: JSON.stringify(drs) }
  }
  return {
    ...dormantColumns,
    entityCount: es.length,
    entityNames: JSON.stringify(es.map((e) => e.name)),
    entityDescriptions: JSON.stringify(es.map((e) => e.description)),
    entityTypes: Uint32Array.from(es, (e) => types.of(e.type)),
    entityDegrees: Float64Array.from(es, (e) => e.degree),
    entityLists: JSON.stringify(entityLists),
    entityNoteCounts: entityNotes.counts,
    entityNotes: entityNotes.notes,
    edgeSources: Uint32Array.from(rs, (r) => names.of(r.source)),
    edgeTargets: Uint32Array.from(rs, (r) => names.of(r.target)),
    edgeTypes: Uint32Array.from(rs, (r) => types.of(r.type)),
    edgeWeights: Float64Array.from(rs, (r) => r.weight),
    edgeDescriptions: JSON.stringify(edgeDescriptions),
    edgeNoteCounts: edgeNotes.counts,
    edgeNotes: edgeNotes.notes,
    // after the edges: their ends that are not entities are numbered there
    names: JSON.stringify(names.list),
    types: JSON.stringify(types.list),
  }
}

/** Thrown inside `unpackGraph` for columns that do not fit together; the caller treats the save as unreadable. */
class Unfit extends Error {}

function isStrings(list: unknown): list is string[] {
  return Array.isArray(list) && list.every((s) => typeof s === 'string')
}

function stringArray(json: unknown): string[] {
  const list: unknown = typeof json === 'string' ? JSON.parse(json) : undefined
  if (!isStrings(list)) throw new Unfit()
  return list
}

function column<T extends Uint32Array | Float64Array>(value: unknown, type: { new (n: number): T }, length: number): T {
  if (!(value instanceof type) || value.length !== length) throw new Unfit()
  return value
}

/** The notes of each row, as slugs, from counts and numbers checked against `slugs`. */
function backing(counts: Uint32Array, notes: unknown, slugs: readonly string[]): string[][] {
  let total = 0
  for (let i = 0; i < counts.length; i++) total += counts[i]!
  const numbers = column(notes, Uint32Array, total)
  const out: string[][] = new Array(counts.length)
  let at = 0
  for (let i = 0; i < counts.length; i++) {
    const list: string[] = new Array(counts[i]!)
    for (let j = 0; j < list.length; j++) {
      const slug = slugs[numbers[at++]!]
      if (slug === undefined) throw new Unfit()
      list[j] = slug
    }
    out[i] = list
  }
  return out
}

/**
 * Which entities each note of a save backs, by the note's place in the save's slugs: read from
 * the entities' backing columns (numbers both ways), so that a recall right after an open can
 * tell the entities of a note without reading or parsing its text.
 */
export class SavedNoteEntities {
  private constructor(
    private readonly starts: Uint32Array,
    private readonly list: Uint32Array,
    private readonly entities: readonly Entity[],
  ) {}

  /** Inverts `counts` (notes per entity) and `numbers` (those notes, entity after entity). */
  static of(counts: Uint32Array, numbers: Uint32Array, notes: number, entities: readonly Entity[]): SavedNoteEntities {
    const starts = new Uint32Array(notes + 1)
    for (let i = 0; i < numbers.length; i++) starts[numbers[i]! + 1]!++
    for (let i = 0; i < notes; i++) starts[i + 1]! += starts[i]!
    const next = starts.slice(0, notes)
    const list = new Uint32Array(numbers.length)
    let at = 0
    for (let e = 0; e < counts.length; e++) for (let k = counts[e]!; k > 0; k--) list[next[numbers[at++]!]!++] = e
    return new SavedNoteEntities(starts, list, entities)
  }

  /** The keys of the entities the note at `place` backs, as saved. */
  keysAt(place: number): string[] {
    const out: string[] = []
    for (let i = this.starts[place]!; i < this.starts[place + 1]!; i++) out.push(this.entities[this.list[i]!]!.key)
    return out
  }
}

/** The entities and relationships `packGraph` was given, or undefined when the columns do not fit together. */
export function unpackGraph(saved: unknown, slugs: readonly string[]): { entities: Entity[]; relationships: SavedEdges; noteEntities: SavedNoteEntities; dormant?: DormantBacking } | undefined {
  if (typeof saved !== 'object' || saved === null) return undefined
  const c = saved as Partial<Record<keyof GraphColumns, unknown>>
  try {
    const n = c.entityCount
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 0) throw new Unfit()
    const names = stringArray(c.names)
    const types = stringArray(c.types)
    const entityNames = stringArray(c.entityNames)
    const descriptions = stringArray(c.entityDescriptions)
    if (names.length < n || entityNames.length !== n || descriptions.length !== n) throw new Unfit()
    const entityTypes = column(c.entityTypes, Uint32Array, n)
    const degrees = column(c.entityDegrees, Float64Array, n)
    const entityNoteCounts = column(c.entityNoteCounts, Uint32Array, n)
    const entityNotes = backing(entityNoteCounts, c.entityNotes, slugs)
    const lists: unknown = JSON.parse(String(c.entityLists))
    if (!Array.isArray(lists)) throw new Unfit()
    const entities: Entity[] = new Array(n)
    for (let i = 0; i < n; i++) {
      const type = types[entityTypes[i]!]
      if (type === undefined) throw new Unfit()
      entities[i] = { key: names[i]!, name: entityNames[i]!, type, description: descriptions[i]!, descriptions: [], queries: [], degree: degrees[i]!, observations: entityNotes[i]! }
    }
    for (const item of lists as unknown[]) {
      const [i, more, queries] = Array.isArray(item) ? item : []
      const e = typeof i === 'number' ? entities[i] : undefined
      if (!e || !isStrings(more) || !isStrings(queries)) throw new Unfit()
      e.descriptions = more
      e.queries = queries
    }
    const sources = c.edgeSources
    if (!(sources instanceof Uint32Array)) throw new Unfit()
    const m = sources.length
    const targets = column(c.edgeTargets, Uint32Array, m)
    const edgeTypes = column(c.edgeTypes, Uint32Array, m)
    const weights = column(c.edgeWeights, Float64Array, m)
    const noteCounts = column(c.edgeNoteCounts, Uint32Array, m)
    const noteStarts = new Uint32Array(m + 1)
    for (let i = 0; i < m; i++) noteStarts[i + 1] = noteStarts[i]! + noteCounts[i]!
    const notes = column(c.edgeNotes, Uint32Array, noteStarts[m]!)
    const described: unknown = JSON.parse(String(c.edgeDescriptions))
    if (!Array.isArray(described)) throw new Unfit()
    const edgeDescriptions = new Map<number, string>()
    for (const item of described as unknown[]) {
      const [i, text] = Array.isArray(item) ? item : []
      if (typeof i !== 'number' || typeof text !== 'string') throw new Unfit()
      edgeDescriptions.set(i, text)
    }
    // checks every number against its list: a RangeError lands below, like Unfit
    const relationships = new SavedEdges({ names, types, sources, targets, edgeTypes, weights, noteStarts, notes, slugs, descriptions: edgeDescriptions })
    // backing() checked every number against the slugs
    const noteEntities = SavedNoteEntities.of(entityNoteCounts, c.entityNotes as Uint32Array, slugs.length, entities)
    const dormant = c.dormantEntities === undefined && c.dormantEdges === undefined ? undefined : unpackDormant(c.dormantEntities, c.dormantEdges, slugs)
    return { entities, relationships, noteEntities, ...(dormant ? { dormant } : {}) }
  } catch {
    // damaged or foreign columns cost a read of the tables and a derive, never the memory
    return undefined
  }
}

/** The dormant keys `packGraph` was given, their notes checked against `slugs`. */
function unpackDormant(entityJson: unknown, edgeJson: unknown, slugs: readonly string[]): DormantBacking {
  const notesOf = (list: unknown): string[] => {
    if (!Array.isArray(list)) throw new Unfit()
    return list.map((n) => {
      const slug = typeof n === 'number' ? slugs[n] : undefined
      if (slug === undefined) throw new Unfit()
      return slug
    })
  }
  const entityRows: unknown = JSON.parse(String(entityJson))
  const edgeRows: unknown = JSON.parse(String(edgeJson))
  if (!Array.isArray(entityRows) || !Array.isArray(edgeRows)) throw new Unfit()
  const entities = new Map<string, readonly string[]>()
  for (const row of entityRows as unknown[]) {
    const [key, notes] = Array.isArray(row) ? row : []
    if (typeof key !== 'string') throw new Unfit()
    entities.set(key, notesOf(notes))
  }
  const edges = new Map<string, DormantEdge>()
  for (const row of edgeRows as unknown[]) {
    const [source, type, target, notes] = Array.isArray(row) ? row : []
    if (typeof source !== 'string' || typeof type !== 'string' || typeof target !== 'string') throw new Unfit()
    edges.set(relationshipKey(source, type, target), { source, type, target, observations: notesOf(notes) })
  }
  return { entities, edges }
}
