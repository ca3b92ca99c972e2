// A folder memory made by `openNodeMemory(dir)` as the README shows it ranks like `cairn mcp --dir`
// (words and the package's own model), and reopens without being handed that model again.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { openNodeMemory } from '../../src/node-store/node-memory'
import { BM25_ONLY } from '../../src/index'
import { STATIC_MODEL_ID } from '../../src/search/static-model-files'

let dirs: string[] = []
const scratch = (): string => {
  const dir = mkdtempSync(join(tmpdir(), 'cairn-defaults-'))
  dirs.push(dir)
  return dir
}
afterEach(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
  dirs = []
})

describe('openNodeMemory defaults', () => {
  it('makes a hybrid memory with the shipped model, and reopens it with no embedder handed in', async () => {
    const dir = scratch()
    const first = await openNodeMemory(dir)
    expect(first.memory.info.retrieval.embedder).toBe(STATIC_MODEL_ID)
    const conn = await first.memory.connect({ agent: 'script' })
    await conn.write({ title: 'Clinic', content: 'Saw the physician about the knee.' })
    await first.close()

    const again = await openNodeMemory(dir)
    const r = await (await again.memory.connect({ agent: 'script' })).recall({ query: 'physician knee' })
    expect(r.signals).toEqual({ words: true, vectors: true, model: STATIC_MODEL_ID })
    expect(r.observations.map((o) => o.title)).toEqual(['Clinic'])
    await again.close()
  })

  it('words alone only when asked, and such a memory reopens as it was', async () => {
    const dir = scratch()
    const first = await openNodeMemory(dir, { bm25Only: true })
    expect(first.memory.info.retrieval.embedder).toBe(BM25_ONLY)
    await first.close()
    const again = await openNodeMemory(dir)
    expect(again.memory.info.retrieval.embedder).toBe(BM25_ONLY)
    const r = await (await again.memory.connect({ agent: 'script' })).recall({ query: 'anything' })
    expect(r.signals).toEqual({ words: true, vectors: false })
    await again.close()
  })
})
