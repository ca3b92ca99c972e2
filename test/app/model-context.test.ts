// The registries the app offers its tools to besides Chromium's (tested in the browser by
// test/e2e/model-context.e2e.test.ts): one on `navigator` from an earlier draft that withdraws
// by name or by a returned handle, and a refusal of one tool that leaves the others offered.
import { afterEach, describe, expect, it, vi } from 'vitest'
import { offerTools, pageTools } from '../../src/app/model-context'
import { toolListing } from '../../src/tools/definitions'
import type { AppConnection } from '../../src/app/worker-link'

const conn = {} as AppConnection
const names = toolListing().map((t) => t.name)

afterEach(() => {
  vi.unstubAllGlobals()
  vi.restoreAllMocks()
})

describe('offering the tools to the page', () => {
  it('offers nothing and withdraws nothing where the page has no registry', () => {
    vi.stubGlobal('document', {})
    vi.stubGlobal('navigator', {})
    expect(() => offerTools(conn)()).not.toThrow()
  })

  it('uses navigator.modelContext when document has none, withdrawing by name', () => {
    const registered = new Set<string>()
    vi.stubGlobal('document', {})
    vi.stubGlobal('navigator', {
      modelContext: { registerTool: (t: { name: string }) => void registered.add(t.name), unregisterTool: (n: string) => void registered.delete(n) },
    })
    const withdraw = offerTools(conn)
    expect([...registered].sort()).toEqual([...names].sort())
    withdraw()
    expect(registered.size).toBe(0)
  })

  it('withdraws through the handle a registry returns', () => {
    const live = new Set<string>()
    vi.stubGlobal('document', {
      modelContext: { registerTool: (t: { name: string }) => (live.add(t.name), { unregister: () => live.delete(t.name) }) },
    })
    const withdraw = offerTools(conn)
    expect(live.size).toBe(names.length)
    withdraw()
    expect(live.size).toBe(0)
  })

  it('names a tool the registry refuses, offers the rest, and aborts the signal on withdrawal', async () => {
    const signals: AbortSignal[] = []
    const offered: string[] = []
    vi.stubGlobal('document', {
      modelContext: {
        registerTool: (t: { name: string }, options: { signal: AbortSignal }) => {
          signals.push(options.signal)
          if (t.name === 'recall') return Promise.reject(new DOMException('Duplicate tool name', 'InvalidStateError'))
          offered.push(t.name)
          return Promise.resolve()
        },
      },
    })
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined)
    const withdraw = offerTools(conn)
    await new Promise((r) => setTimeout(r, 0))
    expect(offered).toHaveLength(names.length - 1)
    expect(warn).toHaveBeenCalledTimes(1)
    expect(String(warn.mock.calls[0]![0])).toContain('"recall"')
    expect(String(warn.mock.calls[0]![0])).toContain('Duplicate tool name')
    expect(signals.some((s) => s.aborted)).toBe(false)
    withdraw()
    expect(signals.every((s) => s.aborted)).toBe(true)
  })

  it('answers a call as MCP does: the body as JSON text, isError set on a refusal', async () => {
    const recall = pageTools(conn).find((t) => t.name === 'recall')!
    const result = await recall.execute({ query: 42 })
    expect(result.isError).toBe(true)
    expect(JSON.parse(result.content[0]!.text).error.code).toBe('invalid_request')
    expect(recall.annotations.readOnlyHint).toBe(true)
  })
})
