// Name-variant signals: evidence that two entity names denote the same real-world thing,
// and an index that finds an existing name's variants without comparing all pairs.
//
// Every signal is conservative: a false "maybe the same" costs a reviewer's time, and an
// accepted wrong merge corrupts the graph, so short or contrasting names get no evidence.
import { normalizeName } from './normalize'
import type { MergeEvidence, PossibleDuplicate } from './types'

/** Leading courtesy and academic titles; removing them leaves the person's name. */
const HONORIFICS = new Set([
  'dr', 'doctor', 'mr', 'mrs', 'ms', 'miss', 'mx', 'mme', 'mlle', 'prof', 'professor', 'sir', 'dame',
  'rev', 'reverend', 'hon', 'herr', 'frau',
])
/** Titles that name a gender: `Mr. Smith` and `Mrs. Smith` are two people, not one. */
const MASCULINE = new Set(['mr', 'sir', 'herr'])
const FEMININE = new Set(['mrs', 'ms', 'miss', 'mme', 'mlle', 'dame', 'frau'])
/** Trailing post-nominal letters after a person's name. */
const POST_NOMINALS = new Set(['phd', 'dphil', 'md', 'esq', 'mba'])
/** Trailing legal-form words of organizations. */
const ORG_SUFFIXES = new Set([
  'corp', 'corporation', 'inc', 'incorporated', 'ltd', 'limited', 'llc', 'llp', 'lp', 'plc', 'co', 'company',
  'gmbh', 'ag', 'sa', 'sas', 'sarl', 'srl', 'spa', 'bv', 'nv', 'oy', 'ab', 'kk', 'pty', 'pte', 'lda',
])
/** Words an acronym may skip: `Bank of America` is both BA and BOA. */
export const ACRONYM_STOP_WORDS = new Set(['of', 'and', 'the', 'for', 'a', 'an', 'in', 'on', 'at', 'to', 'de', 'du', 'des', 'la', 'le', 'les', 'del', 'der', 'und', 'et', 'y'])

/** Edit distance applies only to tokens at least this long; shorter words differ by one letter too often (Java, Lava). */
export const EDIT_MIN_LENGTH = 8
const EDIT_MAX_LENGTH = 40
const ACRONYM_MAX_LENGTH = 10
const COMPACT_MIN_LENGTH = 5

/** Everything the signals compare, computed once per name. */
export interface NameSignature {
  name: string
  /** normalizeName(name): the entity key before aliases. */
  key: string
  /** Lowercased word tokens; `I.B.M.` becomes one token `ibm`. */
  tokens: string[]
  /** Tokens without leading titles, a leading "the", trailing suffixes and post-nominals. */
  core: string[]
  variantKey: string
  /** Core tokens joined without spaces: `Coca-Cola` and `CocaCola` agree. */
  compact: string
  /** Core tokens sorted: `Doe, Jane` and `Jane Doe` agree. */
  sorted: string
  /** The name read as an acronym (written in capitals or with dots), or null. */
  acronym: string | null
  /** Acronyms a multi-word name could be shortened to, with and without stop words. */
  initials: string[]
  /** Honorifics removed from the front. */
  titles: string[]
  /** Blocking keys for one-edit typos in a long token (see `deletionKeys`). */
  deletions: string[]
}

interface RawToken {
  text: string
  lower: string
  /** Merged from single letters such as `I.B.M.` */
  dotted: boolean
}

// Apostrophes vanish (O'Brien = OBrien); +, # and & stay so C, C++ and C# remain three names.
function rawTokens(name: string): RawToken[] {
  const parts = name.normalize('NFKC').replace(/['\u2019`]/gu, '').split(/[^\p{L}\p{N}+#&]+/u).filter((p) => p.length > 0)
  const out: RawToken[] = []
  let run: string[] = []
  const flush = (): void => {
    if (run.length >= 2) {
      const text = run.join('')
      out.push({ text, lower: text.toLowerCase(), dotted: true })
    } else if (run.length === 1) out.push({ text: run[0]!, lower: run[0]!.toLowerCase(), dotted: false })
    run = []
  }
  for (const p of parts) {
    if (/^\p{L}$/u.test(p)) {
      run.push(p)
      continue
    }
    flush()
    out.push({ text: p, lower: p === '&' ? 'and' : p.toLowerCase(), dotted: false })
  }
  flush()
  return out
}

export function nameSignature(name: string): NameSignature {
  const raw = rawTokens(name)
  const tokens = raw.map((t) => t.lower)
  let start = 0
  let end = raw.length
  const titles: string[] = []
  // strip from the ends while a real name remains
  while (end - start > 1 && HONORIFICS.has(raw[start]!.lower)) titles.push(raw[start++]!.lower)
  if (end - start > 1 && raw[start]!.lower === 'the') start++
  while (end - start > 1 && (ORG_SUFFIXES.has(raw[end - 1]!.lower) || POST_NOMINALS.has(raw[end - 1]!.lower))) end--
  const coreRaw = raw.slice(start, end)
  const core = coreRaw.map((t) => t.lower)
  const only = coreRaw.length === 1 ? coreRaw[0]! : undefined
  const acronym = only && readsAsAcronym(only) ? only.lower : null
  return {
    name,
    key: normalizeName(name),
    tokens,
    core,
    variantKey: core.join(' '),
    compact: core.join(''),
    sorted: [...core].sort().join(' '),
    acronym,
    initials: initialsOf(core),
    titles,
    deletions: deletionKeys(core),
  }
}

// Dotted letters, or capitals in a script that has case: `IBM`, `I.B.M.`, not `Ibm` or `ibm`.
function readsAsAcronym(t: RawToken): boolean {
  const n = [...t.text].length
  if (n < 2 || n > ACRONYM_MAX_LENGTH || !/^\p{L}+$/u.test(t.text)) return false
  return t.dotted || (t.text === t.text.toUpperCase() && t.text !== t.text.toLowerCase())
}

/** The core name: lowercased words without titles, legal suffixes or punctuation. */
export function variantKey(name: string): string {
  return nameSignature(name).variantKey
}

function firstLetters(ws: readonly string[]): string {
  let out = ''
  for (const w of ws) out += String.fromCodePoint(w.codePointAt(0)!)
  return out
}

function initialsOf(core: string[]): string[] {
  if (core.length < 2) return []
  const all = firstLetters(core)
  const significant = firstLetters(core.filter((w) => !ACRONYM_STOP_WORDS.has(w)))
  const out = new Set<string>()
  for (const a of [significant, all]) if (a.length >= 2 && /^\p{L}+$/u.test(a)) out.add(a)
  return [...out]
}

// Two tokens one edit apart share a string obtained by deleting at most one character from
// each (symmetric deletion), so these keys find typo candidates with map lookups, not scans.
function deletionKeys(core: string[]): string[] {
  const out = new Set<string>()
  for (let i = 0; i < core.length; i++) {
    const t = core[i]!
    // UTF-16 offsets of each code point, so a deletion never splits a surrogate pair
    const offsets: number[] = []
    for (let k = 0; k < t.length; k += t.codePointAt(k)! > 0xffff ? 2 : 1) offsets.push(k)
    if (offsets.length < EDIT_MIN_LENGTH || offsets.length > EDIT_MAX_LENGTH) continue
    offsets.push(t.length)
    const before = `${core.length}:${i}:${core.slice(0, i).map((w) => `${w} `).join('')}`
    const after = core.slice(i + 1).map((w) => ` ${w}`).join('')
    out.add(before + t + after)
    // digits are never typos (see editDistanceSignal), so deleting one finds nothing
    for (let j = 0; j + 1 < offsets.length; j++) {
      if (!isDigit(t.charCodeAt(offsets[j]!))) out.add(before + t.slice(0, offsets[j]) + t.slice(offsets[j + 1]) + after)
    }
  }
  return [...out]
}

function isDigit(code: number): boolean {
  return code >= 48 && code <= 57
}

/** Optimal-string-alignment distance (a swap of neighbours counts once), giving up above `max`. */
export function editDistance(a: string, b: string, max = 2): number {
  const x = [...a]
  const y = [...b]
  if (Math.abs(x.length - y.length) > max) return max + 1
  let prev2: number[] = []
  let prev = Array.from({ length: y.length + 1 }, (_, j) => j)
  for (let i = 1; i <= x.length; i++) {
    const cur = [i]
    let best = i
    for (let j = 1; j <= y.length; j++) {
      const cost = x[i - 1] === y[j - 1] ? 0 : 1
      let d = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + cost)
      if (i > 1 && j > 1 && x[i - 1] === y[j - 2] && x[i - 2] === y[j - 1]) d = Math.min(d, prev2[j - 2]! + 1)
      cur.push(d)
      if (d < best) best = d
    }
    if (best > max) return max + 1
    prev2 = prev
    prev = cur
  }
  return prev[y.length]!
}

function hasTitleIn(s: NameSignature, set: ReadonlySet<string>): boolean {
  for (const t of s.titles) if (set.has(t)) return true
  return false
}

function genderClash(a: NameSignature, b: NameSignature): boolean {
  return (hasTitleIn(a, MASCULINE) && hasTitleIn(b, FEMININE)) || (hasTitleIn(a, FEMININE) && hasTitleIn(b, MASCULINE))
}

const q = (s: NameSignature): string => JSON.stringify(s.name)

/** Same name once titles, legal suffixes, punctuation or spacing are set aside. */
export function coreNameSignal(a: NameSignature, b: NameSignature): MergeEvidence | null {
  if (a.key === b.key || a.core.length === 0 || genderClash(a, b)) return null
  if (a.variantKey === b.variantKey) {
    if (a.tokens.join(' ') === b.tokens.join(' ')) {
      return { signal: 'same_core_name', detail: `${q(a)} and ${q(b)} differ only in punctuation`, weight: 0.95 }
    }
    // "Dr. Smith" vs "Smith": a lone surname behind a title is weak evidence
    const loneSurname = a.core.length === 1 && (a.titles.length > 0 || b.titles.length > 0)
    return {
      signal: 'title_or_suffix',
      detail: `${q(a)} and ${q(b)} are the same name without titles or company suffixes`,
      weight: loneSurname ? 0.55 : 0.9,
    }
  }
  if (a.compact === b.compact && [...a.compact].length >= COMPACT_MIN_LENGTH) {
    return { signal: 'same_core_name', detail: `${q(a)} and ${q(b)} have the same letters, spaced differently`, weight: 0.85 }
  }
  return null
}

/** One name is the initials of the other: `IBM` / `International Business Machines`. */
export function acronymSignal(a: NameSignature, b: NameSignature): MergeEvidence | null {
  for (const [short, long] of [[a, b], [b, a]] as const) {
    if (short.acronym && long.core.length >= 2 && long.initials.includes(short.acronym)) {
      // two-letter acronyms stand for too many things to be strong evidence on their own
      const weight = short.acronym.length >= 3 ? 0.8 : 0.55
      return { signal: 'acronym', detail: `${q(short)} reads as the initials of ${q(long)}`, weight }
    }
  }
  return null
}

/** The same words in another order: `Doe, Jane` / `Jane Doe`. */
export function tokenReorderSignal(a: NameSignature, b: NameSignature): MergeEvidence | null {
  if (a.core.length < 2 || a.sorted !== b.sorted || a.variantKey === b.variantKey) return null
  return { signal: 'token_reorder', detail: `${q(a)} and ${q(b)} are the same words in another order`, weight: 0.8 }
}

function digitsOf(s: string): string {
  let out = ''
  for (let i = 0; i < s.length; i++) if (isDigit(s.charCodeAt(i))) out += s[i]
  return out
}

/** A one-letter typo in one long word, all other words equal: `Kubernetes` / `Kubernetis`. */
export function editDistanceSignal(a: NameSignature, b: NameSignature): MergeEvidence | null {
  if (a.core.length !== b.core.length || a.variantKey === b.variantKey) return null
  let differing = -1
  for (let i = 0; i < a.core.length; i++) {
    if (a.core[i] === b.core[i]) continue
    if (differing >= 0) return null
    differing = i
  }
  const x = a.core[differing]!
  const y = b.core[differing]!
  const shorter = Math.min([...x].length, [...y].length)
  // Windows 10 vs Windows 11, or a version number in a long token: numbers never count as typos
  if (shorter < EDIT_MIN_LENGTH || digitsOf(x) !== digitsOf(y) || editDistance(x, y, 1) > 1) return null
  return { signal: 'edit_distance', detail: `${q(a)} and ${q(b)} are one typo apart`, weight: shorter >= 10 ? 0.65 : 0.5 }
}

/** Every name signal that fires, strongest first; a core-name match makes the others redundant. */
export function compareNames(a: NameSignature, b: NameSignature): MergeEvidence[] {
  const core = coreNameSignal(a, b)
  if (core) return [core]
  const out = [acronymSignal(a, b), tokenReorderSignal(a, b), editDistanceSignal(a, b)].filter((e): e is MergeEvidence => e !== null)
  return out.sort((x, y) => y.weight - x.weight)
}

/**
 * Names that look related but contrast: they share a word or one extends the other, yet no
 * signal says they are the same (`Paris` / `Paris Hilton`, `John Smith` / `Jane Smith`,
 * `Java` / `JavaScript`). Such pairs are usually distinct things that belong together.
 */
export function namesContrast(a: NameSignature, b: NameSignature, nameEvidence: readonly MergeEvidence[] = compareNames(a, b)): boolean {
  if (genderClash(a, b)) return true
  if (nameEvidence.length > 0) return false
  for (const t of a.core) if (b.core.includes(t)) return true
  const [short, long] = a.compact.length <= b.compact.length ? [a.compact, b.compact] : [b.compact, a.compact]
  return short.length > 0 && (long.startsWith(short) || long.endsWith(short))
}

export interface VariantMatch {
  key: string
  name: string
  evidence: MergeEvidence[]
}

/** Existing names by their blocking keys, kept up to date as entities come and go. */
export class VariantIndex {
  private readonly entries = new Map<string, NameSignature>()
  // most blocks hold one key: a bare string until a second key arrives saves a Set per block
  private readonly blocks = new Map<string, string | Set<string>>()

  constructor(entries: Iterable<{ key: string; name: string }> = []) {
    for (const e of entries) this.add(e.key, e.name)
  }

  get size(): number {
    return this.entries.size
  }

  signature(key: string): NameSignature | undefined {
    return this.entries.get(key)
  }

  add(key: string, name: string): void {
    const current = this.entries.get(key)
    if (current?.name === name) return
    if (current) this.remove(key)
    const sig = nameSignature(name)
    this.entries.set(key, sig)
    for (const b of storedBlocks(sig)) {
      const held = this.blocks.get(b)
      if (held === undefined) this.blocks.set(b, key)
      else if (typeof held === 'string') {
        if (held !== key) this.blocks.set(b, new Set([held, key]))
      } else held.add(key)
    }
  }

  remove(key: string): void {
    const sig = this.entries.get(key)
    if (!sig) return
    this.entries.delete(key)
    for (const b of storedBlocks(sig)) {
      const held = this.blocks.get(b)
      if (held === key) this.blocks.delete(b)
      else if (typeof held === 'object') {
        held.delete(key)
        if (held.size === 1) this.blocks.set(b, [...held][0]!)
      }
    }
  }

  /** Keys sharing a blocking key with `sig`, sorted; the caller still checks the evidence. */
  candidates(sig: NameSignature): string[] {
    return this.keysIn(probeBlocks(sig))
  }

  /** Keys stored under any of `blocks` (as made by `probeBlocks`), sorted. */
  keysIn(blocks: readonly string[]): string[] {
    let out: Set<string> | undefined
    for (const b of blocks) {
      const held = this.blocks.get(b)
      if (held === undefined) continue
      out ??= new Set()
      if (typeof held === 'string') out.add(held)
      else for (const k of held) out.add(k)
    }
    return out ? [...out].sort() : []
  }

  /**
   * Every pair of indexed keys that share a blocking key (at most `cap` keys taken from one
   * block, smallest first), each pair once or more; the caller still checks the evidence.
   */
  *pairs(cap = Infinity): Generator<[string, string]> {
    const members = (held: string | Set<string> | undefined): string[] =>
      held === undefined ? [] : typeof held === 'string' ? [held] : [...held].sort().slice(0, cap)
    for (const [b, held] of this.blocks) {
      if (b.startsWith('I:')) continue
      if (b.startsWith('A:')) {
        // an acronym pairs with the names whose initials it spells, not with other acronyms
        const longs = members(this.blocks.get(`I:${b.slice(2)}`))
        for (const x of members(held)) for (const y of longs) if (x !== y) yield [x, y]
        continue
      }
      if (typeof held === 'string') continue
      const keys = members(held)
      for (let i = 0; i < keys.length; i++) for (let j = i + 1; j < keys.length; j++) yield [keys[i]!, keys[j]!]
    }
  }

  /**
   * Indexed names that look like variants of `name`, strongest evidence first, then by key.
   * With `saved`, also the names of a saved graph not indexed here (see `SavedNameBlocks`).
   */
  match(name: string | NameSignature, skipKey?: string, saved?: SavedNames): VariantMatch[] {
    const sig = typeof name === 'string' ? nameSignature(name) : name
    const out: VariantMatch[] = []
    const consider = (key: string, other: NameSignature) => {
      if (key === skipKey || other.key === sig.key) return
      const evidence = compareNames(sig, other)
      if (evidence.length > 0) out.push({ key, name: other.name, evidence })
    }
    for (const key of this.candidates(sig)) consider(key, this.entries.get(key)!)
    if (saved) {
      const probes = probeBlocks(sig)
      for (const key of saved.blocks.keysUnder(probes)) {
        const current = this.entries.has(key) ? undefined : saved.nameOf(key)
        if (current === undefined) continue
        // a shared hash is not a shared block: the name's own blocks decide, as in the index
        const other = nameSignature(current)
        if (storedBlocks(other).some((b) => probes.includes(b))) consider(key, other)
      }
    }
    return out.sort((x, y) => y.evidence[0]!.weight - x.evidence[0]!.weight || (x.key < y.key ? -1 : x.key > y.key ? 1 : 0))
  }
}

/** Past this many entities a saved graph keeps no name blocks: the numbers would not fit beside the hashes. */
const SAVED_NAMES_MAX = 2 ** 21

/**
 * The blocking keys of a saved graph's entity names, each as a 32-bit hash beside the entity's
 * place in the save, sorted: after an open, a write finds a new name's variants among names not
 * yet indexed with a binary search per block, where indexing them all first takes about a
 * second at 100,000 entities. Two blocks may share a hash; `VariantIndex.match` checks the name.
 */
export class SavedNameBlocks {
  private constructor(
    /** hash * 2^21 + place, ascending: exact in a double while place < 2^21 */
    private readonly packed: Float64Array,
    private readonly keys: readonly string[],
  ) {}

  /** The packed column for `entities` in their save order; undefined past `SAVED_NAMES_MAX` of them. */
  static pack<E extends { key: string; name: string }>(entities: readonly E[], signatureOf: (e: E) => NameSignature): Float64Array | undefined {
    if (entities.length >= SAVED_NAMES_MAX) return undefined
    const values: number[] = []
    entities.forEach((e, place) => {
      for (const b of new Set(storedBlocks(signatureOf(e)))) values.push(blockHash(b) * SAVED_NAMES_MAX + place)
    })
    return Float64Array.from(values).sort()
  }

  /** Reads a packed column for entities `keys` (in save order); undefined when it does not fit them. */
  static of(packed: unknown, keys: readonly string[]): SavedNameBlocks | undefined {
    if (!(packed instanceof Float64Array) || keys.length >= SAVED_NAMES_MAX) return undefined
    for (let i = 0; i < packed.length; i++) {
      const v = packed[i]!
      if (!Number.isInteger(v) || v < 0 || v % SAVED_NAMES_MAX >= keys.length || (i > 0 && v < packed[i - 1]!)) return undefined
    }
    return new SavedNameBlocks(packed, keys)
  }

  /** Keys of the saved entities with a block hashing as one of `blocks` does. */
  keysUnder(blocks: readonly string[]): Set<string> {
    const out = new Set<string>()
    for (const b of blocks) {
      const low = blockHash(b) * SAVED_NAMES_MAX
      let lo = 0
      let hi = this.packed.length
      while (lo < hi) {
        const mid = (lo + hi) >>> 1
        if (this.packed[mid]! < low) lo = mid + 1
        else hi = mid
      }
      for (let i = lo; i < this.packed.length && this.packed[i]! < low + SAVED_NAMES_MAX; i++) out.add(this.keys[this.packed[i]! - low]!)
    }
    return out
  }
}

/** Saved names to search besides an index: their blocks, and each key's name now (undefined once gone). */
export interface SavedNames {
  blocks: SavedNameBlocks
  nameOf(key: string): string | undefined
}

/** FNV-1a over UTF-16 code units: the same number for the same block in every build. */
function blockHash(block: string): number {
  let h = 0x811c9dc5
  for (let i = 0; i < block.length; i++) {
    h ^= block.charCodeAt(i)
    h = Math.imul(h, 0x01000193)
  }
  return h >>> 0
}

// Acronyms are stored under one prefix and looked up under the other, so `IBM` finds the
// names whose initials are `ibm` and those names find `IBM`.
function storedBlocks(s: NameSignature): string[] {
  return blocksOf(s, 'A', 'I')
}

function probeBlocks(s: NameSignature): string[] {
  return blocksOf(s, 'I', 'A')
}

function blocksOf(s: NameSignature, acronymAs: string, initialsAs: string): string[] {
  if (s.core.length === 0) return []
  const out = [block('v', s.variantKey), block('c', s.compact)]
  if (s.core.length >= 2) out.push(block('s', s.sorted))
  if (s.acronym) out.push(block(acronymAs, s.acronym))
  for (const i of s.initials) out.push(block(initialsAs, i))
  for (const d of s.deletions) out.push(block('d', d))
  return out
}

function block(kind: string, value: string): string {
  return `${kind}:${value}`
}

/** At most this many existing names are reported per new name. */
export const MAX_DUPLICATES_PER_NAME = 5

// Signatures and probe keys of entities seen on earlier writes, so scanning the graph does
// not re-tokenize it; weak, so entities the graph drops are forgotten.
const signatureCache = new WeakMap<object, { sig: NameSignature; probes: string[] }>()

function cachedSignature(e: { key: string; name: string }): { sig: NameSignature; probes: string[] } {
  const hit = signatureCache.get(e)
  if (hit && hit.sig.name === e.name) return hit
  const sig = nameSignature(e.name)
  const entry = { sig, probes: probeBlocks(sig) }
  signatureCache.set(e, entry)
  return entry
}

/**
 * Existing entities whose names look like variants of a new name, for the write response.
 * Pass a maintained `VariantIndex` for map lookups only; a plain iterable is scanned once
 * against an index of the (few) new names.
 */
export function findPossibleDuplicates(newNames: readonly string[], existing: VariantIndex | Iterable<{ key: string; name: string }>, saved?: SavedNames): PossibleDuplicate[] {
  const names = [...new Set(newNames)]
  const found = new Map<string, VariantMatch[]>()
  if (existing instanceof VariantIndex) {
    for (const n of names) found.set(n, existing.match(n, undefined, saved))
  } else {
    const probe = new VariantIndex(names.map((n) => ({ key: n, name: n })))
    if (probe.size === 0) return []
    for (const e of existing) {
      const { sig, probes } = cachedSignature(e)
      for (const n of probe.keysIn(probes)) {
        const newSig = probe.signature(n)!
        if (newSig.key === sig.key || newSig.key === e.key) continue
        const evidence = compareNames(newSig, sig)
        if (evidence.length === 0) continue
        let list = found.get(n)
        if (!list) found.set(n, (list = []))
        list.push({ key: e.key, name: e.name, evidence })
      }
    }
    for (const list of found.values()) list.sort((x, y) => y.evidence[0]!.weight - x.evidence[0]!.weight || (x.key < y.key ? -1 : 1))
  }
  const out: PossibleDuplicate[] = []
  for (const n of names) {
    for (const m of (found.get(n) ?? []).slice(0, MAX_DUPLICATES_PER_NAME)) out.push({ name: n, existing: m.name, reason: m.evidence[0]!.detail })
  }
  return out
}
