// What a person pastes into an agent to give it a connection: an MCP client configuration
// that runs `cairn mcp` as a replica of this memory on its sync server, named and ranking as
// the memory does (words alone, or words and its model), and the few lines an
// in-browser extension runs with the library. Both carry the connection's own token, which
// the sync server and the MCP server accept with the connection's tier.

import { BM25_ONLY, type RetrievalConfig } from '../core/types'
import { USE_LITE_ID } from '../search/use-lite-files'

export interface AgentSetup {
  serverUrl: string
  memoryId: string
  memoryName: string
  token: string
  retrieval: Pick<RetrievalConfig, 'embedder' | 'weights' | 'snippetLength'>
  /** Where this app serves the optional USE-lite manifest: a replica of a memory ranked by it loads it from there. */
  useLiteManifestUrl?: string
}

/** The `cairn mcp` options that make a replica rank as the memory does (see `replicaRetrieval` in src/mcp/command.ts). */
export function rankingArgs(r: AgentSetup['retrieval'], useLiteManifestUrl?: string): string[] {
  const ranking = r.embedder === BM25_ONLY ? ['--bm25'] : ['--vector-weight', String(r.weights.vector)]
  const model = r.embedder === USE_LITE_ID && useLiteManifestUrl ? ['--model', useLiteManifestUrl] : []
  return [...ranking, ...model, '--snippet-length', String(r.snippetLength)]
}

/** The `mcpServers` entry of Claude Desktop, Cursor and other MCP clients, as JSON. */
export function mcpClientConfig(s: AgentSetup): string {
  const args = ['-y', '--package=cairn-memory', 'cairn', 'mcp', '--server', s.serverUrl, '--memory', s.memoryId, '--token', s.token, '--name', s.memoryName, ...rankingArgs(s.retrieval, s.useLiteManifestUrl)]
  return JSON.stringify({ mcpServers: { cairn: { command: 'npx', args } } }, null, 2)
}

/** The library calls for a browser extension: its own copy of the memory, synced, used through this connection. */
export function extensionSnippet(s: AgentSetup): string {
  return [
    "import { createMemory, openMemory } from 'cairn-memory'",
    '',
    `const id = ${JSON.stringify(s.memoryId)}`,
    `const token = ${JSON.stringify(s.token)}`,
    `const memory = await openMemory(id).catch(() => createMemory({ id, name: ${JSON.stringify(s.memoryName)} }))`,
    `const sync = await memory.sync({ serverUrl: ${JSON.stringify(s.serverUrl)}, token })`,
    'await sync.client.whenSynced()',
    'const agent = await memory.connectWithToken(token)',
  ].join('\n')
}
