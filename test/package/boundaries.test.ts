// The engine's door stays shut to the package's own code: the library, its hosts and the shipped
// worker reach a memory through `Memory`'s methods, or the owner's operations through
// `ownerOf` (engine/owner-door); only tests and benchmarks open `engineOf`. `Memory` itself
// shows only its public members.
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { Memory } from '../../src/engine/memory-handle'

const root = fileURLToPath(new URL('../../', import.meta.url))

function sources(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((d) => {
    const path = join(dir, d.name)
    if (d.isDirectory()) return sources(path)
    return /\.(ts|svelte)$/.test(d.name) ? [path] : []
  })
}

/** The module specifiers a file imports or re-exports from, dynamic imports included. */
function specifiers(file: string): string[] {
  const text = readFileSync(join(root, file), 'utf8')
  return [...text.matchAll(/(?:from\s+|import\s*\(\s*)['"]([^'"]+)['"]/g)].map((m) => m[1]!)
}

const production = [...sources('src'), ...sources('worker')]

describe('the engine door', () => {
  it('finds the production sources it checks', () => {
    expect(production.length).toBeGreaterThan(50)
    expect(production).toContain(join('src', 'interop', 'markdown-vault.ts'))
  })

  it('is opened by no production module: only src/internals.ts and the owner door read it, and only Memory registers with it', () => {
    const offenders = production.flatMap((file) =>
      specifiers(file)
        .filter((s) => /(^|\/)internals$/.test(s) || /(^|\/)engine-door$/.test(s))
        .filter((s) => !(file === join('src', 'internals.ts') && s.endsWith('engine-door')))
        .filter((s) => !(file === join('src', 'engine', 'memory-handle.ts') && s.endsWith('engine-door')))
        .filter((s) => !(file === join('src', 'engine', 'owner-door.ts') && s.endsWith('engine-door')))
        .map((s) => `${relative('.', file)} imports ${s}`),
    )
    expect(offenders).toEqual([])
  })

  it('is not exported by the public entry', () => {
    expect(specifiers(join('src', 'index.ts')).filter((s) => /internals|engine-door|owner-door|memory-engine/.test(s))).toEqual([])
  })
})

describe('the public Memory', () => {
  it('has only its public members: no @internal one for the declarations to strip', () => {
    const source = readFileSync(join(root, 'src', 'engine', 'memory-handle.ts'), 'utf8')
    expect(source).not.toContain('@internal')
    const members = Object.getOwnPropertyNames(Memory.prototype).filter((m) => m !== 'constructor')
    // private members are on the prototype too (TypeScript's `private` is not `#`): name them apart
    const privates = ['refreshConnections', 'takeInShared']
    expect(members.filter((m) => !privates.includes(m)).sort()).toEqual(
      ['close', 'connect', 'connectWithToken', 'info', 'listConnections', 'revoke', 'saveIndex', 'setSingleValued', 'setVisibility', 'singleValued', 'sync'].sort(),
    )
  })
})
