// Offers the agent tools to the page's tool registry (WebMCP: `document.modelContext`, or
// `navigator.modelContext` where a browser or polyfill puts it), bound to the memory on screen
// through the app's own connection. Tool calls go through the same dispatcher as MCP, so
// validation, tiers and errors are the same.
import { dispatchTool } from '../tools/dispatch'
import { toolListing } from '../tools/definitions'
import { TOOL_ANNOTATIONS } from '../mcp/annotations'
import type { Connection } from '../engine/connection'
import type { AppConnection } from './worker-link'

interface ToolResult {
  content: Array<{ type: 'text'; text: string }>
  isError: boolean
}

interface PageTool {
  name: string
  title: string
  description: string
  inputSchema: Record<string, unknown>
  annotations: { readOnlyHint: boolean }
  execute(args: unknown): Promise<ToolResult>
}

/**
 * The registry as browsers ship it: Chromium's `registerTool(tool, { signal })` returns a
 * promise and withdraws the tool when the signal aborts; earlier drafts returned a handle
 * with `unregister()` or offered `unregisterTool(name)`.
 */
interface ModelContext {
  registerTool(tool: PageTool, options?: { signal?: AbortSignal }): unknown
  unregisterTool?(name: string): unknown
}

function registry(): ModelContext | undefined {
  for (const holder of [globalThis.document, globalThis.navigator] as Array<{ modelContext?: unknown } | undefined>) {
    const mc = holder?.modelContext as Partial<ModelContext> | null | undefined
    if (mc && typeof mc.registerTool === 'function') return mc as ModelContext
  }
  return undefined
}

/** The tools for `conn`, each answering with the body and `isError` an MCP tool call gives. */
export function pageTools(conn: AppConnection): PageTool[] {
  return toolListing().map((t) => ({
    ...t,
    title: TOOL_ANNOTATIONS[t.name]?.title ?? t.name,
    annotations: { readOnlyHint: TOOL_ANNOTATIONS[t.name]?.readOnlyHint ?? false },
    async execute(args: unknown) {
      // the worker connection has the same methods as an in-process one, each returning a promise
      const outcome = await dispatchTool(conn as unknown as Connection, t.name, args)
      const body = outcome.ok ? outcome.result : { error: outcome.error }
      return { content: [{ type: 'text', text: JSON.stringify(body) }], isError: !outcome.ok }
    },
  }))
}

function isAbort(e: unknown): boolean {
  return typeof e === 'object' && e !== null && (e as { name?: unknown }).name === 'AbortError'
}

/** Registers the tools for `conn`; returns the function that withdraws them again. */
export function offerTools(conn: AppConnection): () => void {
  const mc = registry()
  if (!mc) return () => undefined
  const withdrawal = new AbortController()
  // what to undo for registries that ignore the signal: a returned handle, or the tool's name
  const undo: Array<() => unknown> = []
  const refused = (name: string, e: unknown): void => {
    // withdrawn before the browser settled the registration: nothing to report
    if (withdrawal.signal.aborted && isAbort(e)) return
    // e.g. the page already holds a tool of that name; the other tools are still offered
    console.warn(`Cairn could not offer the tool "${name}" to the page's agents: ${e instanceof Error ? e.message : String(e)}`)
  }
  for (const tool of pageTools(conn)) {
    const byName = () => mc.unregisterTool?.(tool.name)
    try {
      const registered = mc.registerTool(tool, { signal: withdrawal.signal })
      if (registered instanceof Promise) {
        registered.then(() => undo.push(byName), (e: unknown) => refused(tool.name, e))
      } else {
        const handle = registered as { unregister?: () => unknown } | undefined
        undo.push(typeof handle?.unregister === 'function' ? () => handle.unregister?.() : byName)
      }
    } catch (e) {
      refused(tool.name, e)
    }
  }
  return () => {
    if (withdrawal.signal.aborted) return
    withdrawal.abort()
    for (const step of undo) {
      try {
        step()
      } catch {
        // already gone with the signal
      }
    }
  }
}
