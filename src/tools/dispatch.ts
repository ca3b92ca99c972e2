// Runs one tool call through a connection (so its tier is checked) and always answers with a
// JSON-safe envelope: an agent gets a structured error it can act on, never a thrown exception.
import type { z } from 'zod'
import { LIMITS } from '../core/limits'
import { isMemoryError, type ErrorCode } from '../core/errors'
import type { Connection } from '../engine/connection'
import { findTool, TOOLS } from './definitions'
import { onlyContractIssues } from './schemas'

export type ToolErrorCode = ErrorCode | 'internal'

export interface ToolError {
  code: ToolErrorCode
  message: string
  details: Record<string, unknown>
}

export type ToolOutcome = { ok: true; result: unknown } | { ok: false; error: ToolError }

export interface ToolIssue {
  path: string
  message: string
}

function issuePath(path: ReadonlyArray<PropertyKey>): string {
  return path.reduce<string>((acc, key) => (typeof key === 'number' ? `${acc}[${key}]` : acc ? `${acc}.${String(key)}` : String(key)), '')
}

function invalid(toolName: string, error: z.ZodError): ToolError {
  const issues: ToolIssue[] = error.issues.map((i) => ({ path: issuePath(i.path), message: i.message }))
  // Oversized content is the one rejection the core names differently; keep that code stable.
  const tooLarge = error.issues.length === 1 && error.issues[0]!.code === 'too_big' && issuePath(error.issues[0]!.path) === 'content'
  const list = issues.map((i) => (i.path ? `${i.path}: ${i.message}` : i.message)).join('; ')
  return tooLarge
    ? { code: 'too_large', message: `${toolName} rejected: content is over ${LIMITS.contentHardChars} characters; split it into several observations and keep the source in the appendix`, details: { issues } }
    : { code: 'invalid_request', message: `${toolName} arguments are invalid: ${list}`, details: { issues } }
}

/** Turns results into plain JSON (drops undefined, turns bytes into arrays) so every transport sends the same thing. */
function plain(value: unknown): unknown {
  return value === undefined ? null : JSON.parse(JSON.stringify(value, (_k, v: unknown) => (v instanceof Uint8Array ? Array.from(v) : v)))
}

export async function dispatchTool(conn: Connection, name: unknown, args: unknown): Promise<ToolOutcome> {
  try {
    const def = typeof name === 'string' ? findTool(name) : undefined
    if (!def) {
      // never stringify a caller's value: it may have no prototype, or be huge
      const shown = typeof name === 'string' ? JSON.stringify(name.slice(0, 80)) : `(a ${name === null ? 'null' : typeof name})`
      return {
        ok: false,
        error: { code: 'invalid_request', message: `unknown tool ${shown}; tools: ${TOOLS.map((t) => t.name).join(', ')}`, details: { tool: shown } },
      }
    }
    const parsed = def.schema.safeParse(args ?? {})
    if (parsed.success) return { ok: true, result: plain(await def.run(conn, parsed.data)) }
    // well shaped but against the write contract: the memory applies that contract itself and
    // reports every problem at once (with the entities it does not know), under its own codes
    if (onlyContractIssues(parsed.error)) return { ok: true, result: plain(await def.run(conn, args as never)) }
    return { ok: false, error: invalid(def.name, parsed.error) }
  } catch (e) {
    if (isMemoryError(e)) return { ok: false, error: { code: e.code, message: e.message, details: (plain(e.details) as Record<string, unknown>) ?? {} } }
    return { ok: false, error: { code: 'internal', message: e instanceof Error ? e.message : String(e), details: {} } }
  }
}
