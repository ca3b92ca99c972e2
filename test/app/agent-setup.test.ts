// The pasted MCP configuration starts `cairn mcp` as a replica of the memory with the
// connection's own token, in the arguments the command reads, named and ranking as the memory does.
import { parseArgs } from 'node:util'
import { describe, expect, it } from 'vitest'
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb'
import { extensionSnippet, mcpClientConfig, type AgentSetup } from '../../src/app/agent-setup'
import { createMemory } from '../../src/index'
import { replicaRetrieval } from '../../src/mcp/command'
import { defaultEmbedder } from '../support/default-embedder'

const bm25 = { embedder: 'bm25-only', weights: { text: 1, vector: 0 }, snippetLength: 150 }
const setup: AgentSetup = { serverUrl: 'ws://127.0.0.1:1234', memoryId: 'mem-1', memoryName: 'Research "notes"', token: 'tok_abc', retrieval: bm25 }

function argsOf(s: AgentSetup): string[] {
  const config = JSON.parse(mcpClientConfig(s)) as { mcpServers: { cairn: { command: string; args: string[] } } }
  expect(config.mcpServers.cairn.command).toBe('npx')
  return config.mcpServers.cairn.args
}

/** The options `cairn mcp` reads from those arguments (the same names as src/mcp/command.ts). */
function mcpValues(args: string[]) {
  const string = { type: 'string' } as const
  return parseArgs({
    args: args.slice(args.indexOf('mcp') + 1),
    options: { server: string, memory: string, token: string, name: string, bm25: { type: 'boolean' }, 'vector-weight': string, 'snippet-length': string },
  }).values
}

describe('agent setup', () => {
  it('the MCP client config runs cairn mcp against the memory on its server with the token and the memory\'s name', () => {
    const args = argsOf(setup)
    expect(args.slice(2, 4)).toEqual(['cairn', 'mcp'])
    const v = mcpValues(args)
    expect([v.server, v.memory, v.token, v.name]).toEqual(['ws://127.0.0.1:1234', 'mem-1', 'tok_abc', 'Research "notes"'])
  })

  it('the replica it starts ranks as the memory does: words alone, or words and the shipped model with its weight', async () => {
    const embedder = await defaultEmbedder()
    const hybrid = await createMemory({ name: 'hybrid', indexedDB: new IDBFactory(), IDBKeyRange, retrieval: { weights: { text: 0.65, vector: 0.35 }, snippetLength: 200 }, embedder })
    const words = await createMemory({ name: 'words', indexedDB: new IDBFactory(), IDBKeyRange, retrieval: { embedder: 'bm25-only', snippetLength: 150 } })
    for (const memory of [hybrid, words]) {
      const retrieval = replicaRetrieval(mcpValues(argsOf({ ...setup, memoryName: memory.info.name, retrieval: memory.info.retrieval })))
      const replica = await createMemory({ name: 'replica', indexedDB: new IDBFactory(), IDBKeyRange, retrieval, ...(retrieval.embedder === 'bm25-only' ? {} : { embedder }) })
      expect(replica.info.retrieval).toEqual(memory.info.retrieval)
      await replica.close()
      await memory.close()
    }
  })

  it('the extension snippet quotes what it embeds', () => {
    const code = extensionSnippet(setup)
    expect(code).toContain('const id = "mem-1"')
    expect(code).toContain('name: "Research \\"notes\\""')
    expect(code).toContain('memory.connectWithToken(token)')
  })
})
