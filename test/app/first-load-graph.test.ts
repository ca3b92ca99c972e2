// What the first screen loads before it is interactive: the engine worker's first script answers
// the memory list without the rest of the engine, and the page's entry starts that worker before
// the shell, whose first screen is the list alone. Checked on the static imports of the sources,
// so a new `import` that pulls a heavy module into one of those first chunks fails here.
import { existsSync, readFileSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const root = fileURLToPath(new URL('../../', import.meta.url))

/** Packages the first loads import, by name. */
const packages = new Set<string>()

/** Relative modules `file` imports statically for their values (type-only imports and `import()` left out). */
function staticImports(file: string): string[] {
  const text = readFileSync(join(root, file), 'utf8')
  const out: string[] = []
  for (const m of text.matchAll(/^\s*(import|export)\s+(type\s+)?([^'"]*?)\s*(?:from\s+)?['"]([^'"]+)['"]/gm)) {
    const [, , typeOnly, clause, spec] = m
    if (typeOnly) continue
    // `export { x }` without `from` is not an import; `import { type A, type B }` loads nothing
    if (m[1] === 'export' && !/\bfrom\b/.test(m[0])) continue
    if (/^\{\s*(type\s+\w+\s*,?\s*)+\}$/.test(clause!.trim())) continue
    if (spec!.startsWith('.')) out.push(resolve(file, spec!))
    else packages.add(`${file} -> ${spec}`)
  }
  return out
}

function resolve(from: string, spec: string): string {
  const base = join(dirname(from), spec)
  for (const candidate of [base, `${base}.ts`, join(base, 'index.ts')]) {
    if (existsSync(join(root, candidate)) && /\.(ts|svelte)$/.test(candidate)) return relative('.', candidate)
  }
  throw new Error(`${from} imports ${spec}, which resolves to no source file`)
}

/** Every source module loaded with `entry`, before any dynamic import runs. */
function firstLoad(entry: string): Set<string> {
  packages.clear()
  const seen = new Set<string>()
  const visit = (file: string): void => {
    if (seen.has(file)) return
    seen.add(file)
    for (const next of staticImports(file)) visit(next)
  }
  visit(entry)
  return seen
}

describe('what loads before the first screen', () => {
  it("the engine worker's first script reads the memory list without the rest of the engine", () => {
    const worker = firstLoad('worker/engine.worker.ts')
    expect(worker).toContain('src/engine/host.ts')
    expect(worker).toContain('src/engine/registry-read.ts')
    // Dexie comes with the rest of the engine
    expect([...packages].filter((p) => !p.endsWith('-> comlink'))).toEqual([])
    for (const heavy of ['src/store/db.ts', 'src/engine/hosted-engine.ts', 'src/engine/memory-handle.ts', 'src/engine/memory-engine.ts', 'src/search/static-embedder.ts', 'src/sync/memory-sync.ts', 'src/interop/import.ts']) {
      expect(worker, heavy).not.toContain(heavy)
    }
  })

  it("the page's entry holds the worker link, not the shell", () => {
    const entry = firstLoad('src/app/main.ts')
    expect(entry).toContain('src/app/worker-link.ts')
    expect(entry).not.toContain('src/app/shell.ts')
    expect(entry).not.toContain('src/app/App.svelte')
  })

  it("the shell's first screen is the memory list; a memory's screens load when opened", () => {
    const shell = firstLoad('src/app/shell.ts')
    expect(shell).toContain('src/app/screens/MemoryList.svelte')
    expect(shell).not.toContain('src/app/screens/MemoryScreen.svelte')
    expect(shell).not.toContain('src/app/screens/Recall.svelte')
  })
})
