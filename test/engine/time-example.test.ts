// The example of docs/time.md runs as it stands there: a fact superseded and recalled as of two dates.
import { readFileSync } from 'node:fs'
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb'
import ts from 'typescript'
import { describe, expect, it } from 'vitest'
import { createMemory, type RecallResult } from '../../src/index'

/** The first ts block after `heading` in `file`, without its import line (TypeScript, as a reader copies it). */
function example(file = '../../docs/time.md', heading = '## Example'): string {
  const doc = readFileSync(new URL(file, import.meta.url), 'utf8')
  const block = /^```ts\n([\s\S]*?)```/m.exec(doc.slice(doc.indexOf(heading)))?.[1]
  if (doc.indexOf(heading) < 0 || !block) throw new Error(`${file} has no example block after ${heading}`)
  return block.replace(/^import .*\n/m, '')
}

describe('docs/time.md example', () => {
  it('is the README\'s too', () => {
    expect(example('../../README.md', 'Facts that change keep their history')).toBe(example())
  })

  it('recalls Beta now and Acme as of 2022', async () => {
    const code = example()
    expect(code.split('\n').filter(Boolean).length).toBeLessThanOrEqual(10)
    const inNode = (opts: Parameters<typeof createMemory>[0]) => createMemory({ ...opts, indexedDB: new IDBFactory(), IDBKeyRange })
    const AsyncFunction = Object.getPrototypeOf(async () => undefined).constructor as new (...args: string[]) => (...args: unknown[]) => Promise<{ now: RecallResult; then: RecallResult }>
    // the block is TypeScript, as a reader copies it: its types are stripped to run it here
    const js = ts.transpileModule(`export {}\n${code}`, { compilerOptions: { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext } }).outputText.replace(/^export \{\};?\n/m, '')
    const { now, then } = await new AsyncFunction('createMemory', `${js}\nreturn { now, then }`)(inNode)
    const employers = (r: RecallResult) => r.relationships.filter((e) => e.type === 'works_at').map((e) => e.target)
    expect(employers(now)).toEqual(['Beta'])
    expect(now.superseded).toBe(1)
    expect(employers(then)).toEqual(['Acme'])
  })
})
