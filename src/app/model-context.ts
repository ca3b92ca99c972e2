// Offers the agent tools to an in-page tool registry (`navigator.modelContext`) where the
// browser has one, bound to the memory on screen through the app's own connection. Tool
// calls go through the same dispatcher as MCP, so validation, tiers and errors are the same.
import { dispatchTool } from '../tools/dispatch'
import { toolListing } from '../tools/definitions'
import type { Connection } from '../engine/connection'
import type { AppConnection } from './worker-link'

interface PageTool {
  name: string
  description: string
  inputSchema: Record<string, unknown>
  execute(args: unknown): Promise<{ content: Array<{ type: 'text'; text: string }>; isError?: boolean }>
}

interface ModelContext {
  registerTool?(tool: PageTool): unknown
  unregisterTool?(name: string): unknown
  provideContext?(context: { tools: PageTool[] }): unknown
}

function registry(): ModelContext | undefined {
  const mc = (navigator as Navigator & { modelContext?: ModelContext }).modelContext
  return mc && typeof mc === 'object' ? mc : undefined
}

/** Registers the tools for `conn`; returns the function that takes them away again. */
export function offerTools(conn: AppConnection): () => void {
  const mc = registry()
  if (!mc) return () => undefined
  const tools: PageTool[] = toolListing().map((t) => ({
    ...t,
    async execute(args: unknown) {
      // the worker connection has the same methods as an in-process one, each returning a promise
      const outcome = await dispatchTool(conn as unknown as Connection, t.name, args)
      return outcome.ok
        ? { content: [{ type: 'text', text: JSON.stringify(outcome.result) }] }
        : { content: [{ type: 'text', text: JSON.stringify({ error: outcome.error }) }], isError: true }
    },
  }))
  if (typeof mc.registerTool === 'function') {
    for (const t of tools) mc.registerTool(t)
    return () => {
      for (const t of tools) mc.unregisterTool?.(t.name)
    }
  }
  if (typeof mc.provideContext === 'function') {
    mc.provideContext({ tools })
    return () => void mc.provideContext?.({ tools: [] })
  }
  return () => undefined
}
