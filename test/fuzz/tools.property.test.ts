// Every agent tool, fed hostile arguments, answers with an envelope (never a throw); a refusal
// carries a stable error code and leaves the memory exactly as it was.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { graphFingerprint } from '../helpers/graph-fingerprint'
import { dispatchTool } from '../../src/tools/dispatch'
import { TOOLS, toolInputSchema } from '../../src/tools/definitions'
import { ada, engine, fixture, type Fixture } from '../engine/fixture'
import { engineOf } from '../../src/internals'

const STABLE_CODES = ['invalid_write', 'invalid_request', 'forbidden', 'not_found', 'conflict', 'config_locked', 'too_large', 'revoked', 'storage_failed', 'model_failed']
const READ_ONLY = new Set(['recall', 'get_observation', 'inspect_entity', 'list_files', 'read_file', 'list_proposals', 'list_single_valued'])

const hostileString = fc.oneof(
  { arbitrary: fc.string({ maxLength: 30 }), weight: 4 },
  { arbitrary: fc.constantFrom('', '   ', '__proto__', 'constructor', 'prototype', '<script>alert(1)</script>', '<img src=x onerror=alert(1)>', '\u0000\u0007\u001b[2J\r\n', '\uD800', '\uFEFF', '2026-02-30T25:61:00Z', 'not a date', 'Infinity', '../../etc/passwd', 'a/../../b', '%00'), weight: 4 },
  { arbitrary: fc.string({ minLength: 70_000, maxLength: 70_005 }), weight: 1 },
)
const badDate = fc.oneof(fc.constantFrom('2026-13-45', '', '0000-00-00', 'yesterday', '1e400'), fc.integer(), fc.constant(Number.NaN))
const hostileValue: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    hostileString,
    badDate,
    fc.integer(),
    fc.double(),
    fc.boolean(),
    fc.constant(null),
    fc.constant(undefined),
    fc.array(tie('value'), { maxLength: 3 }),
    fc.dictionary(fc.oneof(hostileString, fc.constantFrom('__proto__', 'constructor', 'name', 'source', 'target', 'type', 'description')), tie('value'), { maxKeys: 3 }),
  ),
})).value

/** A valid call per tool; the fuzzer spoils one field of it so the validation edge is explored. */
const VALID: Record<string, Record<string, unknown>> = {
  write: { title: 'fuzz', content: 'fuzz content', entities: [{ name: 'Fuzz Subject', description: 'A subject the fuzzer writes about' }] },
  update: { slug: 'SEED', title: 'retitled' },
  delete: { slug: 'SEED' },
  recall: { query: 'mathematician' },
  get_observation: { slug: 'SEED' },
  inspect_entity: { name: ada.name },
  list_files: {},
  read_file: { path: 'docs/seed.md' },
  store_file: { path: 'docs/fuzz.md', data: 'fuzz file' },
  consolidate: {},
  list_proposals: {},
  accept_proposal: { id: 'no-such-proposal' },
  reject_proposal: { id: 'no-such-proposal' },
  list_single_valued: {},
  set_single_valued: { types: ['works_at'] },
}

/** Arguments shaped like the tool's own schema (its real field names) but with hostile values. */
function argsFor(toolName: string, seedSlug: string): fc.Arbitrary<unknown> {
  const def = TOOLS.find((t) => t.name === toolName)!
  const fields = Object.keys((toolInputSchema(def).properties as Record<string, unknown> | undefined) ?? {})
  const keys = fc.constantFrom(...fields, '__proto__', 'constructor', 'extra')
  const valid = JSON.parse(JSON.stringify(VALID[toolName] ?? {}).replaceAll('SEED', seedSlug)) as Record<string, unknown>
  return fc.oneof(
    fc.record({ key: keys, value: hostileValue }).map(({ key, value }) => Object.assign(JSON.parse(JSON.stringify(valid)) as Record<string, unknown>, JSON.parse(`{${JSON.stringify(key)}:null}`) as object, { [key]: value })),
    fc.constant(valid),
    fc.constant(valid),
    hostileValue,
    fc.dictionary(keys, hostileValue, { maxKeys: fields.length + 2 }),
    // __proto__ as an own key (JSON.parse creates it that way; an object literal would not)
    fc.dictionary(keys, hostileValue, { maxKeys: 3 }).map((o) => JSON.parse(`{"__proto__":{"polluted":true},${JSON.stringify(o).slice(1)}`.replace(',}', '}')) as unknown),
  )
}

async function fingerprint(f: Fixture): Promise<string> {
  const files = await f.conn.listFiles()
  const proposals = await f.conn.listProposals()
  const rows = await engineOf(f.memory).db.observations.count()
  return JSON.stringify([graphFingerprint(engineOf(f.memory).committedGraph), files, proposals, rows, f.memory.singleValued()])
}

describe('tool dispatch under hostile arguments', () => {
  it('never throws, refuses with a stable code, and a refusal changes nothing', async () => {
    const f = await fixture()
    const seed = await dispatchTool(f.conn, 'write', { title: 'seed', content: 'c', entities: [ada, engine], relationships: [{ source: ada.name, type: 'worked_on', target: engine.name }] })
    expect(seed.ok).toBe(true)
    const seedSlug = seed.ok ? (seed.result as { slug: string }).slug : ''
    await dispatchTool(f.conn, 'store_file', { path: 'docs/seed.md', data: 'seed file' })
    const counts = { cases: 0, refused: 0, accepted: 0 }
    const toolName = fc.oneof({ arbitrary: fc.constantFrom(...TOOLS.map((t) => t.name)), weight: 8 }, fc.constantFrom('__proto__', 'constructor', 'toString'), hostileString)
    const call = toolName.chain((name) => fc.tuple(fc.constant(name), TOOLS.some((t) => t.name === name) ? argsFor(name, seedSlug) : hostileValue))
    await fc.assert(
      fc.asyncProperty(call, async ([name, args]) => {
        counts.cases++
        const before = await fingerprint(f)
        const outcome = await dispatchTool(f.conn, name, args)
        // every transport sends the envelope as JSON, so serialising it must not fail
        expect(() => JSON.stringify(outcome)).not.toThrow()
        if (outcome.ok) expect(JSON.parse(JSON.stringify(outcome.result))).toEqual(outcome.result)
        if (!outcome.ok) {
          counts.refused++
          expect(STABLE_CODES, `${name.slice(0, 40)}: ${outcome.error.message.slice(0, 200)}`).toContain(outcome.error.code)
          expect(typeof outcome.error.message).toBe('string')
          expect(await fingerprint(f)).toBe(before)
        } else {
          counts.accepted++
          if (READ_ONLY.has(name)) expect(await fingerprint(f)).toBe(before)
        }
      }),
      { numRuns: 300, seed: 20261203 },
    )
    console.info(`tool fuzz: ${counts.cases} cases, ${counts.refused} refused, ${counts.accepted} accepted`)
    expect(counts.cases).toBe(300)
    expect(counts.refused).toBeGreaterThan(100)
    expect(counts.accepted).toBeGreaterThan(20)
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
    const still = await dispatchTool(f.conn, 'recall', { query: 'mathematician' })
    expect(still.ok).toBe(true)
  }, 60_000)
})

describe('tool dispatch with a name that is not a string', () => {
  // an object without a prototype cannot be stringified: the refusal must not try
  it('refuses a name without a prototype as invalid_request', async () => {
    const f = await fixture()
    const outcome = await dispatchTool(f.conn, Object.create(null), {})
    expect(outcome.ok).toBe(false)
    expect(!outcome.ok && outcome.error.code).toBe('invalid_request')
  })

  it('refuses other non-string names as invalid_request', async () => {
    const f = await fixture()
    for (const name of [null, undefined, 42, Number.NaN, {}, [], ['write'], { toString: () => 'write' }]) {
      const outcome = await dispatchTool(f.conn, name, { title: 't', content: 'c' })
      expect(outcome.ok).toBe(false)
      expect(!outcome.ok && outcome.error.code).toBe('invalid_request')
      expect(() => JSON.stringify(outcome)).not.toThrow()
    }
    expect(await engineOf(f.memory).db.observations.count()).toBe(0)
  })
})
