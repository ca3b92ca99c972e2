import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { latencyChartSvg, writeLatencyChart } from '../chart'
import { cairnSystem } from './cairn'
import { benchPeers } from './index'
import { mcpMemorySystem } from './mcp-memory'
import { peerWorkload } from './workload'

describe('peer workload', () => {
  const w = peerWorkload(250, 40)

  it('has unique entity names and relations only between its entities, each stated in a note that names both ends', () => {
    expect(w.entities).toHaveLength(250)
    expect(new Set(w.entities.map((e) => e.name.toLowerCase())).size).toBe(250)
    const names = new Set(w.entities.map((e) => e.name))
    for (const note of w.notes) {
      const inNote = new Set(note.entities.map((e) => e.name))
      for (const r of note.relations) {
        expect(names.has(r.from) && names.has(r.to)).toBe(true)
        expect(inNote.has(r.from) && inNote.has(r.to)).toBe(true)
      }
    }
    expect(w.relations.length).toBeGreaterThanOrEqual(w.entities.length - w.notes.length)
    expect(w.queries).toHaveLength(40)
  })

  it('links each note back to varied earlier notes, not all to the first entity', () => {
    const big = peerWorkload(2_000, 4)
    const targets = big.notes.slice(1).map((n) => n.entities[n.entities.length - 1]!.name)
    const counts = new Map<string, number>()
    for (const t of targets) counts.set(t, (counts.get(t) ?? 0) + 1)
    expect(counts.size).toBeGreaterThan(targets.length / 3)
    expect(Math.max(...counts.values())).toBeLessThan(targets.length / 10)
  })
})

describe('cairn peer system', () => {
  it('answers the same whether the notes were written one by one or imported at once', async () => {
    const w = peerWorkload(300, 20)
    const written = cairnSystem()
    const imported = cairnSystem(undefined, 0)
    try {
      await written.load(w)
      await imported.load(w)
      expect(written.loadedThroughWrites).toBe(true)
      expect(imported.loadedThroughWrites).toBe(false)
      for (const q of w.queries) expect(await imported.search(q.text)).toEqual(await written.search(q.text))
      const names = w.entities.slice(0, 5).map((e) => e.name)
      expect(await imported.open!(names)).toEqual(await written.open!(names))
    } finally {
      await written.close()
      await imported.close()
    }
  }, 30_000)
})

describe('mcp memory server', () => {
  it('stores the workload through its own tools and opens nodes by name with their relations', async () => {
    const w = peerWorkload(60, 4)
    const mcp = mcpMemorySystem()
    try {
      await mcp.load(w)
      expect(mcp.loadedThroughTools).toBe(true)
      const first = w.relations[0]!
      const opened = await mcp.open!([first.from])
      expect(opened.entities).toBe(1)
      expect(opened.relations).toBeGreaterThanOrEqual(1)
      // substring search: the exact name matches, a name that is not stored does not
      expect((await mcp.search(w.entities[5]!.name)).entities).toBeGreaterThanOrEqual(1)
      expect((await mcp.search('zzqx no such text')).entities).toBe(0)
    } finally {
      await mcp.close()
    }
  }, 30_000)
})

describe('benchPeers', () => {
  it('times every system on one store and relates each peer to Cairn', async () => {
    const r = await benchPeers([200], { queries: 12 })
    const systems = ['cairn-bm25', 'cairn-hybrid', 'mcp-memory', 'orama', 'minisearch']
    for (const s of systems) {
      const row = r.rows.find((x) => x.system === s && x.operation === 'search')!
      expect(row.queries).toBe(12)
      expect(row.p50Ms).toBeGreaterThan(0)
      expect(row.p95Ms).toBeGreaterThanOrEqual(row.p50Ms)
      expect(r.samples.filter((x) => x.system === s)).toHaveLength(3)
    }
    const mcp = r.rows.find((x) => x.system === 'mcp-memory' && x.operation === 'search')!
    const bm25 = r.rows.find((x) => x.system === 'cairn-bm25' && x.operation === 'search')!
    const ratio = r.ratios.find((x) => x.system === 'mcp-memory' && x.operation === 'search')!
    expect(ratio.vsBm25P50).toBeCloseTo(mcp.p50Ms / bm25.p50Ms, 1)
    // the vector floor: bytes a flat query reads, and a whole hybrid recall set against it
    expect(r.floors).toHaveLength(1)
    const floor = r.floors[0]!
    const hybrid = r.rows.find((x) => x.system === 'cairn-hybrid' && x.operation === 'search')!
    expect(floor.bytesPerQuery).toBe(200 * floor.dimensions * 4)
    expect(floor.scanMs).toBeGreaterThan(0)
    expect(floor.hybridP50Ms).toBe(hybrid.p50Ms)
    expect(floor.hybridOverFloor).toBeCloseTo(hybrid.p50Ms / floor.scanMs, 0)
    // the name query finds its entity in every system
    for (const s of r.samples.filter((x) => x.query.kind === 'name')) expect(s.entities).toBeGreaterThanOrEqual(1)
    // only the graph stores hand back relations
    expect(r.samples.filter((x) => x.system === 'orama' || x.system === 'minisearch').every((x) => x.relations === 0)).toBe(true)
  }, 60_000)
})

describe('latency chart', () => {
  const dir = mkdtempSync(join(tmpdir(), 'cairn-chart-'))
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  it('draws one line per series, larger stores further right and slower systems higher', () => {
    const path = join(dir, 'c.svg')
    writeLatencyChart(path, [
      { name: 'fast', points: [{ size: 1_000, ms: 0.1 }, { size: 100_000, ms: 1 }] },
      { name: 'slow <peer>', points: [{ size: 1_000, ms: 10 }, { size: 100_000, ms: 100 }] },
    ])
    const svg = readFileSync(path, 'utf8')
    expect(svg.startsWith('<svg')).toBe(true)
    expect(svg).toContain('slow &lt;peer&gt;')
    const lines = [...svg.matchAll(/<polyline[^>]* points="([^"]+)"/g)].map((m) => m[1]!.split(' ').map((p) => p.split(',').map(Number)))
    expect(lines).toHaveLength(2)
    const [fast, slow] = lines as [number[][], number[][]]
    expect(fast[1]![0]!).toBeGreaterThan(fast[0]![0]!)
    // SVG y grows downward: slower is a smaller y
    expect(slow[0]![1]!).toBeLessThan(fast[0]![1]!)
    // log x: 10k sits half way between 1k and 100k
    const mid = latencyChartSvg([{ name: 'a', points: [{ size: 1_000, ms: 1 }, { size: 10_000, ms: 1 }, { size: 100_000, ms: 1 }] }])
    const xs = [...mid.matchAll(/<circle cx="([\d.]+)"/g)].map((m) => Number(m[1]))
    expect(xs[1]! - xs[0]!).toBeCloseTo(xs[2]! - xs[1]!, 0)
  })

  it('refuses an empty chart', () => {
    expect(() => latencyChartSvg([])).toThrow(/no points/)
  })
})
