// No public operation on bad input throws anything but a MemoryError, and none changes stored state.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { graphFingerprint } from '../helpers/graph-fingerprint'
import { MemoryError } from '../../src/index'
import { ada, engine, fixture } from './fixture'
import { engineOf } from '../../src/internals'

const hostileString = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.constantFrom('', ' ', '__proto__', 'constructor', '<script>alert(1)</script>', '\u0000\u0007\u001b[2J', '2026-13-45', 'NaN', '../../etc/passwd', '\uD800'),
  fc.string({ minLength: 20_001, maxLength: 20_010 }),
)
const hostileValue: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    hostileString,
    fc.integer(),
    fc.double(),
    fc.boolean(),
    fc.constant(null),
    fc.constant(undefined),
    fc.array(tie('value'), { maxLength: 3 }),
    fc.dictionary(fc.oneof(hostileString, fc.constantFrom('title', 'content', 'entities', 'relationships', 'name', 'description', 'observedAt', '__proto__')), tie('value'), { maxKeys: 4 }),
  ),
})).value

const almostValid = fc.record({
  title: fc.oneof(hostileString, fc.constant('ok title')),
  content: fc.oneof(hostileString, fc.constant('ok content')),
  observedAt: fc.oneof(hostileString, fc.constant(undefined)),
  confidence: fc.oneof(fc.double(), fc.constant(undefined)),
  entities: fc.oneof(fc.constant(undefined), fc.array(fc.record({ name: hostileString, description: hostileString, type: fc.oneof(hostileString, fc.constant(undefined)) }), { maxLength: 3 })),
  relationships: fc.oneof(fc.constant(undefined), fc.array(fc.record({ source: hostileString, type: hostileString, target: hostileString }), { maxLength: 2 })),
}, { requiredKeys: [] })

describe('bad input', () => {
  it('every operation answers bad input with a MemoryError and leaves state unchanged', async () => {
    const { conn, memory } = await fixture()
    const { slug } = await conn.write({ title: 'seed', content: 'c', entities: [ada, engine], relationships: [{ source: ada.name, type: 'worked_on', target: engine.name }] })
    let cases = 0
    await fc.assert(
      fc.asyncProperty(fc.constantFrom('write', 'update', 'delete', 'recall', 'inspect', 'getObservation', 'storeFile', 'readFile', 'acceptProposal', 'rejectProposal'), fc.oneof(hostileValue, almostValid), hostileValue, async (op, a, b) => {
        cases++
        const before = graphFingerprint(engineOf(memory).committedGraph)
        const stored = await engineOf(memory).db.observations.count()
        const call = (conn as unknown as Record<string, (x: unknown, y?: unknown) => Promise<unknown>>)[op]!.bind(conn)
        // update gets a real slug half of the time so the patch itself is what is judged
        const args: [unknown, unknown?] = op === 'update' ? [typeof b === 'string' ? slug : b, a] : [a, b]
        let outcome: unknown
        try {
          outcome = await call(...args)
        } catch (err) {
          expect(err).toBeInstanceOf(MemoryError)
          expect(graphFingerprint(engineOf(memory).committedGraph)).toBe(before)
          expect(await engineOf(memory).db.observations.count()).toBe(stored)
          return
        }
        // an accepted call must have been valid: reads change nothing, and writes only add
        if (['recall', 'inspect', 'getObservation', 'readFile'].includes(op)) expect(graphFingerprint(engineOf(memory).committedGraph)).toBe(before)
        expect(outcome).toBeDefined()
      }),
      { numRuns: 400, seed: 7 },
    )
    expect(cases).toBe(400)
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
    expect((await conn.getObservation(slug)).title).toBe('seed')
  }, 60_000)
})
