import { describe, expect, it } from 'vitest'
import {
  SavedNameBlocks,
  VariantIndex,
  acronymSignal,
  compareNames,
  coreNameSignal,
  editDistance,
  editDistanceSignal,
  findPossibleDuplicates,
  nameSignature,
  namesContrast,
  tokenReorderSignal,
  variantKey,
} from '../../src/core/variants'
import { normalizeName } from '../../src/core/normalize'

const sig = nameSignature
const signals = (a: string, b: string): string[] => compareNames(sig(a), sig(b)).map((e) => e.signal)

describe('variantKey', () => {
  it('strips titles, legal suffixes, punctuation and case', () => {
    expect(variantKey('Dr. Jane Doe')).toBe('jane doe')
    expect(variantKey('Prof. Dr. Jane Doe, PhD')).toBe('jane doe')
    expect(variantKey('ACME Corp.')).toBe('acme')
    expect(variantKey('Acme Corporation')).toBe('acme')
    expect(variantKey('Widgets Co., Ltd.')).toBe('widgets')
    expect(variantKey('The Walt Disney Company')).toBe('walt disney')
    expect(variantKey('I.B.M.')).toBe('ibm')
    expect(variantKey("O'Brien & Sons")).toBe('obrien and sons')
  })

  it('keeps a name that is nothing but a title or suffix', () => {
    expect(variantKey('Inc.')).toBe('inc')
    expect(variantKey('Dr.')).toBe('dr')
    expect(variantKey('The')).toBe('the')
  })

  it('keeps the symbols that tell languages apart', () => {
    expect(new Set([variantKey('C'), variantKey('C++'), variantKey('C#')]).size).toBe(3)
  })
})

describe('name signals', () => {
  it('core name: titles and company suffixes', () => {
    expect(coreNameSignal(sig('Dr. Jane Doe'), sig('Jane Doe'))?.signal).toBe('title_or_suffix')
    expect(coreNameSignal(sig('ACME Corp.'), sig('Acme Corporation'))?.signal).toBe('title_or_suffix')
    expect(coreNameSignal(sig('U.S.A.'), sig('USA'))?.signal).toBe('same_core_name')
    expect(coreNameSignal(sig('Coca-Cola'), sig('CocaCola'))?.signal).toBe('same_core_name')
    // the same key is one entity already, not a pair
    expect(coreNameSignal(sig('ACME Corp.'), sig('acme corp'))).toBeNull()
  })

  it('core name: a lone surname behind a title is weak, and gendered titles clash', () => {
    expect(coreNameSignal(sig('Dr. Smith'), sig('Smith'))!.weight).toBeLessThan(0.6)
    expect(coreNameSignal(sig('Mr. Smith'), sig('Mrs. Smith'))).toBeNull()
    expect(namesContrast(sig('Mr. Smith'), sig('Mrs. Smith'))).toBe(true)
  })

  it('acronym: initials without stop words, dotted or capitalized', () => {
    expect(acronymSignal(sig('IBM'), sig('International Business Machines'))?.signal).toBe('acronym')
    expect(acronymSignal(sig('International Business Machines'), sig('I.B.M.'))?.signal).toBe('acronym')
    expect(acronymSignal(sig('MIT'), sig('Massachusetts Institute of Technology'))).not.toBeNull()
    expect(acronymSignal(sig('BoA'), sig('Bank of America'))).toBeNull() // mixed case is a word, not an acronym
    expect(acronymSignal(sig('BOA'), sig('Bank of America'))).not.toBeNull() // stop word kept
    expect(acronymSignal(sig('BA'), sig('Bank of America'))!.weight).toBeLessThan(0.6) // two letters: weak
    // a lowercase word is not read as an acronym
    expect(acronymSignal(sig('ibm'), sig('International Business Machines'))).toBeNull()
    expect(acronymSignal(sig('IBM'), sig('Intel Business Machines Corp'))?.signal).toBe('acronym')
    expect(acronymSignal(sig('IBM'), sig('Internal Build Manager Tools'))).toBeNull()
    // only a script with case can be written in capitals
    expect(sig('東京').acronym).toBeNull()
    expect(sig('NASA').acronym).toBe('nasa')
  })

  it('token reorder', () => {
    expect(tokenReorderSignal(sig('Doe, Jane'), sig('Jane Doe'))?.signal).toBe('token_reorder')
    expect(tokenReorderSignal(sig('Jane Doe'), sig('Jane Doe Smith'))).toBeNull()
  })

  it('edit distance only for long words, never for numbers', () => {
    expect(editDistanceSignal(sig('Kubernetes'), sig('Kubernetis'))?.signal).toBe('edit_distance')
    expect(editDistanceSignal(sig('Kubernetes'), sig('Kubrenetes'))?.signal).toBe('edit_distance') // swapped letters
    expect(editDistanceSignal(sig('Postgres'), sig('Postgress'))?.signal).toBe('edit_distance')
    expect(editDistanceSignal(sig('Java'), sig('Lava'))).toBeNull()
    expect(editDistanceSignal(sig('Martin'), sig('Marvin'))).toBeNull()
    expect(editDistanceSignal(sig('Windows 10'), sig('Windows 11'))).toBeNull()
    expect(editDistanceSignal(sig('Release20240101'), sig('Release20240102'))).toBeNull()
    expect(editDistanceSignal(sig('Slovakia'), sig('Slovenia'))).toBeNull() // two edits
    expect(editDistanceSignal(sig('Kubernetes cluster'), sig('Kubernetis cluster'))).not.toBeNull()
    expect(editDistanceSignal(sig('Kubernetes cluster'), sig('Kubernetis clusters'))).toBeNull() // two words differ
  })

  it('editDistance counts one swap as one edit and stops early', () => {
    expect(editDistance('kitten', 'sitting', 5)).toBe(3)
    expect(editDistance('abcd', 'abdc')).toBe(1)
    expect(editDistance('abc', 'abc')).toBe(0)
    expect(editDistance('a', 'abcdefgh', 2)).toBe(3)
  })

  it('gives nothing for unrelated or contrasting names', () => {
    for (const [a, b] of [
      ['Java', 'JavaScript'],
      ['Paris', 'Paris Hilton'],
      ['John Smith', 'Jane Smith'],
      ['Apple', 'Apple pie'],
      ['C', 'C++'],
      ['Jane Doe', 'Dr. John Doe'],
    ] as const) {
      expect(signals(a, b), `${a} / ${b}`).toEqual([])
      expect(namesContrast(sig(a), sig(b)), `${a} / ${b}`).toBe(true)
    }
    expect(namesContrast(sig('IBM'), sig('Big Blue'))).toBe(false)
  })
})

describe('VariantIndex and findPossibleDuplicates', () => {
  const existing = ['International Business Machines', 'Jane Doe', 'Kubernetes', 'Acme Corporation', 'Java', 'Paris'].map((name) => ({ key: normalizeName(name), name }))

  it('finds variants of new names among existing ones', () => {
    const dups = findPossibleDuplicates(['IBM', 'Doe, Jane', 'Kubernetis', 'ACME Corp.', 'JavaScript', 'Paris Hilton'], existing)
    expect(dups.map((d) => [d.name, d.existing])).toEqual([
      ['IBM', 'International Business Machines'],
      ['Doe, Jane', 'Jane Doe'],
      ['Kubernetis', 'Kubernetes'],
      ['ACME Corp.', 'Acme Corporation'],
    ])
    expect(dups[0]!.reason).toContain('initials')
  })

  it('gives the same answer from a maintained index as from a scan', () => {
    const names = ['IBM', 'Doe, Jane', 'Kubernetis', 'ACME Corp.', 'JavaScript', 'Dr. Jane Doe']
    expect(findPossibleDuplicates(names, new VariantIndex(existing))).toEqual(findPossibleDuplicates(names, existing))
  })

  it('does not report an entity as its own duplicate', () => {
    expect(findPossibleDuplicates(['Jane Doe', 'jane doe'], existing)).toEqual([])
  })

  it('follows additions and removals', () => {
    const index = new VariantIndex(existing)
    expect(index.match('Doe, Jane').map((m) => m.key)).toEqual(['jane doe'])
    index.remove('jane doe')
    expect(index.match('Doe, Jane')).toEqual([])
    index.add('jane doe', 'Jane Doe')
    index.add('jane doe', 'Jane Doe') // idempotent
    expect(index.match('Doe, Jane').map((m) => m.key)).toEqual(['jane doe'])
    expect(index.size).toBe(existing.length)
  })

  it('lists candidate pairs from shared blocks, acronyms only against expansions', () => {
    const index = new VariantIndex(['IBM', 'NASA', 'International Business Machines', 'Jane Doe', 'Doe, Jane', 'Kubernetes', 'Kubernetis', 'Paris'].map((n) => ({ key: normalizeName(n), name: n })))
    const found = new Set([...index.pairs()].map((p) => [...p].sort().join(' + ')))
    expect([...found].sort()).toEqual(['doe, jane + jane doe', 'ibm + international business machines', 'kubernetes + kubernetis'])
  })

  it('finds the duplicates among 10k existing entities through the index as a full scan does', () => {
    const many = Array.from({ length: 10_000 }, (_, i) => ({ key: `entity number ${i}`, name: `Entity Number ${i}` }))
    many.push({ key: 'international business machines', name: 'International Business Machines' })
    const index = new VariantIndex(many)
    const newNames = ['IBM', 'Number Entity 42', 'Something New', 'Kubernetis']
    const indexed = findPossibleDuplicates(newNames, index)
    const scanned = findPossibleDuplicates(newNames, many)
    expect(scanned.map((d) => d.existing)).toEqual(['International Business Machines', 'Entity Number 42'])
    expect(indexed).toEqual(scanned)
  })

  it('finds through saved name blocks, beside a partial index, what the whole index finds', () => {
    const names = ['International Business Machines', 'Jane Doe', 'Doe Jane', 'Kubernetes', 'Acme Corporation', 'Java', 'Paris', 'NASA', 'Dr. Ada Lovelace', 'Royal Society']
    const saved = [...names, ...Array.from({ length: 2_000 }, (_, i) => `Entity Number ${i}`)].map((name) => ({ key: normalizeName(name), name }))
    const blocks = SavedNameBlocks.of(SavedNameBlocks.pack(saved, (e) => nameSignature(e.name)), saved.map((e) => e.key))!
    expect(blocks).toBeDefined()
    // since the save: one entity gone, one renamed, one added; a third of the rest indexed so far
    const now = new Map(saved.map((e) => [e.key, e.name]))
    now.delete('kubernetes')
    now.set('paris', 'Pariss Hiltonn')
    now.set('royal academy', 'Royal Academy')
    const partial = new VariantIndex()
    saved.forEach((e, i) => i % 3 === 0 && now.has(e.key) && partial.add(e.key, now.get(e.key)!))
    partial.add('paris', 'Pariss Hiltonn')
    partial.add('royal academy', 'Royal Academy')
    const whole = new VariantIndex([...now].map(([key, name]) => ({ key, name })))
    const newNames = ['IBM', 'Jane Doe', 'Kubernetis', 'ACME Corp.', 'Pariss Hilton', 'Paris', 'N.A.S.A.', 'Ada Lovelace', 'Entity Numbr 7', 'Number Entity 1999', 'Royal Academies', 'Something New']
    const expected = findPossibleDuplicates(newNames, whole)
    expect(expected.length).toBeGreaterThanOrEqual(6)
    expect(findPossibleDuplicates(newNames, partial, { blocks, nameOf: (key) => now.get(key) })).toEqual(expected)
    // without the saved blocks the partial index misses some
    expect(findPossibleDuplicates(newNames, partial)).not.toEqual(expected)
  })

  it('reads saved name blocks only when they fit the saved entities', () => {
    const saved = ['Jane Doe', 'Paris'].map((name) => ({ key: normalizeName(name), name }))
    const packed = SavedNameBlocks.pack(saved, (e) => nameSignature(e.name))!
    expect(SavedNameBlocks.of(packed, saved.map((e) => e.key))).toBeDefined()
    expect(SavedNameBlocks.of(packed, ['jane doe'])).toBeUndefined()
    expect(SavedNameBlocks.of(packed.slice().reverse(), saved.map((e) => e.key))).toBeUndefined()
    expect(SavedNameBlocks.of([1, 2], saved.map((e) => e.key))).toBeUndefined()
  })
})
