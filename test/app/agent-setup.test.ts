// The pasted MCP configuration starts `cairn mcp` as a replica of the memory with the
// connection's own token, in the arguments the command reads, named and ranking as the memory does.
import { parseArgs } from 'node:util'
import { describe, expect, it } from 'vitest'
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb'
import { extensionSnippet, mcpClientConfig, type AgentSetup } from '../../src/app/agent-setup'
import { createMemory } from '../../src/index'
import { replicaRetrieval, useLiteFrom } from '../../src/mcp/command'
import { USE_LITE_ID, USE_LITE_MANIFEST_FILE } from '../../src/search/use-lite-files'
import { defaultEmbedder } from '../support/default-embedder'
import { useLiteBuilt, USE_LITE_BUILT } from '../support/use-lite-built'

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
    options: { server: string, memory: string, token: string, name: string, bm25: { type: 'boolean' }, 'vector-weight': string, model: string, 'snippet-length': string },
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

  const modelUrl = 'http://127.0.0.1:5173/models/optional/cairn-use-lite.json'
  it('only a memory ranked by USE-lite tells its replica where the app serves that model', () => {
    const glove = { embedder: 'cairn-glove-100d@1', weights: { text: 0.6, vector: 0.4 }, snippetLength: 280 }
    expect(mcpValues(argsOf({ ...setup, retrieval: glove, useLiteManifestUrl: modelUrl })).model).toBeUndefined()
    expect(mcpValues(argsOf({ ...setup, retrieval: bm25, useLiteManifestUrl: modelUrl })).model).toBeUndefined()
    const v = mcpValues(argsOf({ ...setup, retrieval: { ...glove, embedder: USE_LITE_ID }, useLiteManifestUrl: modelUrl }))
    expect([v.model, v['vector-weight']]).toEqual([modelUrl, '0.4'])
  })

  const skip = useLiteBuilt()
  it.skipIf(skip !== '')(`the replica of a USE-lite memory loads that model and ranks as the memory does${skip ? ` (skipped: ${skip})` : ''}`, async () => {
    // the model from the file \`npm run build:use-model\` writes; the app's URL serves the same files
    const embedder = await useLiteFrom(`${USE_LITE_BUILT}/${USE_LITE_MANIFEST_FILE}`)
    const memory = await createMemory({ name: 'sentences', indexedDB: new IDBFactory(), IDBKeyRange, retrieval: { weights: { text: 0.5, vector: 0.5 }, snippetLength: 300 }, embedder })
    expect(memory.info.retrieval.embedder).toBe(USE_LITE_ID)
    const values = mcpValues(argsOf({ ...setup, retrieval: memory.info.retrieval, useLiteManifestUrl: modelUrl }))
    const replica = await createMemory({ name: 'replica', indexedDB: new IDBFactory(), IDBKeyRange, retrieval: replicaRetrieval(values), embedder: await useLiteFrom(`${USE_LITE_BUILT}/${USE_LITE_MANIFEST_FILE}`) })
    expect(replica.info.retrieval).toEqual(memory.info.retrieval)
    await replica.close()
    await memory.close()
    await embedder.dispose?.()
  })

  it('a --model that is no USE-lite manifest fails with model_failed', async () => {
    await expect(useLiteFrom('/nonexistent/cairn-use-lite.json')).rejects.toMatchObject({ code: 'model_failed' })
    await expect(useLiteFrom('package.json')).rejects.toMatchObject({ code: 'model_failed' })
  })

  it('the extension snippet quotes what it embeds', () => {
    const code = extensionSnippet(setup)
    expect(code).toContain('const id = "mem-1"')
    expect(code).toContain('name: "Research \\"notes\\""')
    expect(code).toContain('memory.connectWithToken(token)')
  })
})
