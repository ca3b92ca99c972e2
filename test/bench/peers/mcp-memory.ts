// The official MCP memory server (@modelcontextprotocol/server-memory). Its module starts a stdio
// server as soon as it is imported (dist/index.js calls main() at top level), so it cannot be driven
// in-process: it runs as its own process, as agents run it, and is called through the SDK client.
// Its JSONL store lives in a temp dir named by MEMORY_FILE_PATH.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import type { Answer, PeerSystem } from './system'
import type { PeerWorkload } from './workload'

/** Above this many entities the store is written in the server's own JSONL format instead of
 *  through create_entities: each call re-reads the file and checks every new name against every
 *  stored one, so loading 100k entities through the tools takes far longer than the queries. */
export const MCP_TOOL_LOAD_LIMIT = 10_000
const BATCH = 500

interface Graph {
  entities: unknown[]
  relations: unknown[]
}

export interface McpSystem extends PeerSystem {
  /** One JSON-RPC round trip with no work: the transport's share of every call. */
  ping(): Promise<void>
  loadedThroughTools: boolean
}

export function mcpMemorySystem(): McpSystem {
  const dir = mkdtempSync(join(tmpdir(), 'cairn-peers-mcp-'))
  const file = join(dir, 'memory.jsonl')
  let client: Client | undefined
  const call = async (name: string, args: Record<string, unknown>): Promise<Graph> => {
    const r = await client!.callTool({ name, arguments: args })
    if (r.isError) throw new Error(`${name}: ${JSON.stringify(r.content)}`)
    return r.structuredContent as unknown as Graph
  }
  const answer = (g: Graph): Answer => ({ entities: g.entities.length, relations: g.relations.length })
  const system: McpSystem = {
    name: 'mcp-memory',
    loadedThroughTools: true,
    async load(w: PeerWorkload) {
      system.loadedThroughTools = w.entities.length <= MCP_TOOL_LOAD_LIMIT
      // The entity's description and its note's text become its observations, as an agent would store them.
      const noteOf = new Map<string, string>()
      for (const n of w.notes) for (const e of n.entities) if (!noteOf.has(e.name)) noteOf.set(e.name, n.content)
      const entities = w.entities.map((e) => ({ name: e.name, entityType: e.type, observations: [e.description, noteOf.get(e.name)!] }))
      const relations = w.relations.map((r) => ({ from: r.from, to: r.to, relationType: r.type }))
      if (!system.loadedThroughTools) {
        const lines = [...entities.map((e) => JSON.stringify({ type: 'entity', ...e })), ...relations.map((r) => JSON.stringify({ type: 'relation', ...r }))]
        writeFileSync(file, lines.join('\n'))
      }
      const entry = createRequire(import.meta.url).resolve('@modelcontextprotocol/server-memory/dist/index.js')
      client = new Client({ name: 'cairn-bench', version: '0' })
      await client.connect(new StdioClientTransport({ command: process.execPath, args: [entry], env: { PATH: process.env.PATH ?? '', MEMORY_FILE_PATH: file }, stderr: 'ignore' }))
      if (system.loadedThroughTools) {
        for (let i = 0; i < entities.length; i += BATCH) await call('create_entities', { entities: entities.slice(i, i + BATCH) })
        for (let i = 0; i < relations.length; i += BATCH) await call('create_relations', { relations: relations.slice(i, i + BATCH) })
      }
      const all = await call('open_nodes', { names: [w.entities[0]!.name] })
      if (all.entities.length !== 1) throw new Error('mcp-memory did not store the workload')
    },
    async search(query) {
      return answer(await call('search_nodes', { query }))
    },
    async open(names) {
      return answer(await call('open_nodes', { names }))
    },
    async ping() {
      await client!.ping()
    },
    async close() {
      await client?.close()
      rmSync(dir, { recursive: true, force: true })
    },
  }
  return system
}
