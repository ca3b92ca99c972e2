// Every validator of one rule gives the same verdict on the same input: the write contract, the
// tools' schemas, the peer check, backup import and the library's own entry points (create,
// rename, setVisibility, join codes, recall). Each table holds good and bad values alike;
// the rules themselves are in core/identifiers and core/limits.
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb'
import { beforeAll, describe, expect, it } from 'vitest'
import { validateObservationInput } from '../../src/core/contract'
import { decodeJoinCode, encodeJoinCode } from '../../src/core/join-code'
import { LABEL_CHARS, LIMITS, RECALL_TEXT_CHARS } from '../../src/core/limits'
import { exportMemory, parseBackup, type MemoryBackup } from '../../src/engine/backup'
import { renameMemory } from '../../src/engine/memory-admin'
import { createMemory, type Memory } from '../../src/index'
import { checkObservation } from '../../src/sync/validate'
import { checkVisibility, VISIBILITY_KEY } from '../../src/sync/visibility'
import { recallArgs, slugArgs, writeArgs } from '../../src/tools/schemas'
import { fixture, type Fixture } from '../engine/fixture'
import { observation } from '../sync/fixture'

let f: Fixture
let backup: MemoryBackup
const deps = () => ({ indexedDB: new IDBFactory(), IDBKeyRange })

beforeAll(async () => {
  f = await fixture()
  await f.conn.write({ title: 'One note', content: 'its content' })
  backup = await exportMemory(f.memory)
})

async function accepts(run: () => unknown): Promise<boolean> {
  try {
    await run()
    return true
  } catch {
    return false
  }
}

const contract = (input: Record<string, unknown>) => accepts(() => validateObservationInput(input))
const backupTakes = (change: (b: MemoryBackup) => MemoryBackup) => accepts(() => parseBackup(change(structuredClone(backup))))
const note = { title: 'A note', content: 'Some content' }

describe('one rulebook', () => {
  it('slugs: the contract, the tools, the peer check and backup import agree', async () => {
    const table: Array<[string, boolean]> = [
      ['meeting-notes-x7k2', true], ['café-über-3', true], ['会議-メモ', true], ['١٢-ab', true],
      ['../x', false], ['a/b', false], ['a.b', false], ['A-b', false], ['a b', false], ['', false], ['-a', false], ['a--b', false],
      ['a\u202eb', false], ['a'.repeat(LIMITS.slugChars), true], ['a'.repeat(LIMITS.slugChars + 1), false],
    ]
    for (const [slug, good] of table) {
      const verdicts = {
        slug,
        contract: await contract({ ...note, supersedes: [slug] }),
        tool: slugArgs.safeParse({ slug }).success && writeArgs.safeParse({ ...note, supersedes: [slug] }).success,
        peer: checkObservation(slug, observation(slug, { ...note, entities: [] })).ok,
        backup: await backupTakes((b) => ({ ...b, observations: [{ ...b.observations[0]!, slug }] })),
      }
      expect(verdicts).toEqual({ slug, contract: good, tool: good, peer: good, backup: good })
    }
  })

  it('entity names: the contract, the tools, the peer check and backup import agree', async () => {
    const table: Array<[string, boolean]> = [
      ['Ada Lovelace', true], ['Zoë', true], ['x'.repeat(LIMITS.nameChars), true], [` ${'x'.repeat(LIMITS.nameChars)} `, true],
      ['x'.repeat(LIMITS.nameChars + 1), false], ['   ', false], ['', false], ['!!!', false],
    ]
    for (const [name, good] of table) {
      const entity = { name, type: 'person', description: 'Someone' }
      const input = { ...note, entities: [entity] }
      // a peer holds what a write stores: the contract's output when it takes the input, else the raw value
      let entities = [{ ...entity, queries: [] as string[] }]
      try {
        entities = validateObservationInput(input).entities as typeof entities
      } catch { /* refused: the peer is given the raw name */ }
      const verdicts = {
        name: name.slice(0, 20),
        contract: await contract(input),
        tool: writeArgs.safeParse(input).success,
        peer: checkObservation('a-note', observation('a-note', { ...note, entities })).ok,
        backup: await backupTakes((b) => ({ ...b, observations: [{ ...b.observations[0]!, entities: [{ ...entity, queries: [] }] }] })),
      }
      expect(verdicts).toEqual({ name: name.slice(0, 20), contract: good, tool: good, peer: good, backup: good })
    }
  })

  it('memory ids: creating a memory and reading a join code agree', async () => {
    const table: Array<[string, boolean]> = [
      ['abc', true], ['a-1', true], ['0'.repeat(64), true],
      ['A', false], ['-a', false], ['../x', false], ['a/b', false], ['a'.repeat(65), false], ['é', false], ['', false],
    ]
    const retrieval = { embedder: 'bm25', modelChecksum: '', dimensions: 0, weights: { text: 1, vector: 0 }, snippetLength: 280 }
    for (const [id, good] of table) {
      const verdicts = {
        id,
        create: await accepts(async () => (await createMemory({ name: 'M', id, ...deps() })).close()),
        joinCode: await accepts(() => decodeJoinCode(encodeJoinCode({ id, name: 'M', retrieval }))),
      }
      expect(verdicts).toEqual({ id, create: good, joinCode: good })
    }
  })

  it('visibility: create, setVisibility, backup import and the peer check agree', async () => {
    const table: Array<[unknown, string | null, boolean]> = [
      ['private', null, true], ['organization', 'org-1', true], ['organization', 'Team_2', true],
      ['organization', null, false], ['organization', '../x', false], ['organization', 'o'.repeat(129), false],
      ['public', null, false], ['Private', null, false], [42, null, false],
    ]
    let open: Memory | undefined
    for (const [visibility, orgId, good] of table) {
      open ??= await createMemory({ name: 'M', ...deps() })
      const org = orgId === null ? {} : { orgId }
      const verdicts = {
        visibility, orgId,
        create: await accepts(async () => (await createMemory({ name: 'M', visibility: visibility as 'private', ...org, ...deps() })).close()),
        setVisibility: await accepts(() => open!.setVisibility(visibility as 'private', orgId ?? undefined)),
        backup: await backupTakes((b) => ({ ...b, info: { ...b.info, visibility: visibility as 'private', orgId } })),
        peer: checkVisibility(VISIBILITY_KEY, { visibility, orgId, name: 'M' }).ok,
      }
      expect(verdicts).toEqual({ visibility, orgId, create: good, setVisibility: good, backup: good, peer: good })
    }
    await open?.close()
  })

  it('memory names: create, rename, backup import, the peer check and join codes agree', async () => {
    const table: Array<[unknown, boolean]> = [
      ['Ward notes', true], ['x'.repeat(LABEL_CHARS), true], [` ${'x'.repeat(LABEL_CHARS)} `, true],
      ['x'.repeat(LABEL_CHARS + 1), false], ['   ', false], ['', false], [42, false],
    ]
    const retrieval = { embedder: 'bm25', modelChecksum: '', dimensions: 0, weights: { text: 1, vector: 0 }, snippetLength: 280 }
    const d = deps()
    const open = await createMemory({ name: 'M', ...d })
    for (const [name, good] of table) {
      const verdicts = {
        name: String(name).slice(0, 20),
        create: await accepts(async () => (await createMemory({ name: name as string, ...deps() })).close()),
        rename: await accepts(() => renameMemory(open, name, d)),
        backup: await backupTakes((b) => ({ ...b, info: { ...b.info, name: name as string } })),
        peer: checkVisibility(VISIBILITY_KEY, { visibility: 'private', orgId: null, name }).ok,
        joinCode: await accepts(() => decodeJoinCode(encodeJoinCode({ id: 'abc', name: name as string, retrieval }))),
      }
      expect(verdicts).toEqual({ name: String(name).slice(0, 20), create: good, rename: good, backup: good, peer: good, joinCode: good })
    }
    await open.close()
  })

  it('recall text: the library and the recall tool take the same query and entity lengths', async () => {
    for (const [length, good] of [[LIMITS.queryChars + 1, true], [RECALL_TEXT_CHARS, true], [RECALL_TEXT_CHARS + 1, false]] as const) {
      const text = 'ada '.repeat(length).slice(0, length)
      for (const field of ['query', 'entity'] as const) {
        const verdicts = {
          field, length,
          library: await accepts(() => f.conn.recall({ [field]: text })),
          tool: recallArgs.safeParse({ [field]: text }).success,
        }
        expect(verdicts).toEqual({ field, length, library: good, tool: good })
      }
    }
  })
})
