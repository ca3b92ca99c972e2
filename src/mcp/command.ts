// `cairn mcp`: serves one memory to an agent over stdio (the default) or Streamable HTTP. The
// memory lives in a durable folder (`--dir`, default ~/.cairn/memory), in the process only
// (`--ephemeral`), or is a replica of a memory on a sync server. Only JSON-RPC goes to stdout
// in stdio mode; everything meant for a person goes to stderr.
import { homedir } from 'node:os'
import { readFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js'
import { DEFAULT_TIER, isTier } from '../core/access'
import { BM25_ONLY, type RetrievalConfig } from '../core/types'
import { MemoryError } from '../core/errors'
import { createDefaultEmbedder } from '../search/default-embedder'
import { parseJson } from '../search/model-source'
import { parseUseLiteManifest } from '../search/use-lite-files'
import type { Embedder } from '../search/embedder'
import { localMemoryProvider, organizationMemoryProvider, syncedMemoryProvider } from './provider'
import { createMcpServer, startHttpMcpServer } from './server'

export const MCP_USAGE = `usage: cairn mcp [options]

Serves a Cairn memory to an MCP client. stdio by default: stdout carries JSON-RPC only.

  --dir PATH            folder the memory is kept in (default $CAIRN_DIR or ~/.cairn/memory)
  --ephemeral           keep the memory in this process only
  --name NAME           name of a new memory (default "agent memory")
  --bm25                create a new memory that ranks by words alone (no embedding model)
  --token TOKEN         serve with this connection of the memory (cairn connection add), its
                        tier and revocation, instead of a new connection
  --agent NAME          agent name of the connection (default mcp-agent)
  --tier TIER           read | read_write | full (default read_write)
  --http HOST:PORT      Streamable HTTP at http://HOST:PORT/mcp instead of stdio (loopback only);
                        a connection token is printed to stderr once, send it as a Bearer token
  --server ws://HOST:PORT --memory ID --token TOKEN
                        a replica of a memory on a Cairn sync server (shared with the app);
                        TOKEN is a connection made for this agent in the app (its tier and
                        revocation hold here and on the server), or a server token
                        (--sync-token is the same option). It ranks by words alone unless
                        --vector-weight is given; --name and --snippet-length match the memory
  --vector-weight W     a replica that ranks like a hybrid memory: the shipped model, weight W
  --model MANIFEST      rank with USE-lite instead of the shipped model: the URL of its manifest
                        (a Cairn app serves it at /models/optional/cairn-use-lite.json) or the
                        manifest file \`npm run build:use-model\` wrote; a memory made with it
                        needs it
  --snippet-length N    a replica's snippet length (characters)
  --server ws://HOST:PORT --memory ID --org-credential CREDENTIAL
                        a read-only replica of an organization memory, opened with a member
                        credential (cairn org add-member); over HTTP the credential is also
                        the Bearer token
  -h, --help            this text`

export function defaultDataDir(): string {
  return process.env.CAIRN_DIR ? resolve(process.env.CAIRN_DIR) : join(homedir(), '.cairn', 'memory')
}

class UsageError extends Error {}

/**
 * USE-lite from its manifest: a URL (read with the files it names, beside it) or a file on disk
 * with its files in the same folder.
 */
export async function useLiteFrom(manifest: string): Promise<Embedder> {
  const { createUseLiteEmbedder } = await import('../search/use-lite-embedder')
  if (/^https?:\/\//i.test(manifest)) return createUseLiteEmbedder({ manifest, cache: null })
  const file = resolve(manifest)
  const read = (path: string): Uint8Array => {
    try {
      return new Uint8Array(readFileSync(path))
    } catch (err) {
      throw new MemoryError('model_failed', `${path} could not be read (${(err as Error).message}); --model takes the URL or the file of a USE-lite manifest.`, { path })
    }
  }
  const parsed = parseUseLiteManifest(parseJson(read(file), 'USE-lite manifest'))
  const beside = (name: string) => read(join(dirname(file), name))
  return createUseLiteEmbedder({ manifest: parsed, model: beside(parsed.model.file), vocabulary: beside(parsed.vocabulary.file), cache: null })
}

/** A replica's retrieval config from its options: the app passes the memory's own, so both rank alike. */
export function replicaRetrieval(values: { bm25?: boolean; 'vector-weight'?: string; 'snippet-length'?: string }): Partial<RetrievalConfig> {
  const snippet = values['snippet-length']
  const snippetLength = snippet === undefined ? undefined : Number(snippet)
  if (snippetLength !== undefined && !Number.isInteger(snippetLength)) throw new UsageError(`--snippet-length must be a whole number of characters, not "${snippet}"`)
  const withSnippet = snippetLength !== undefined ? { snippetLength } : {}
  const weight = values['vector-weight']
  if (weight === undefined) return { embedder: BM25_ONLY, ...withSnippet }
  if (values.bm25) throw new UsageError('--bm25 and --vector-weight exclude each other')
  const vector = Number(weight)
  if (!(vector >= 0 && vector <= 1)) throw new UsageError(`--vector-weight must be between 0 and 1, not "${weight}"`)
  return { weights: { text: 1 - vector, vector }, ...withSnippet }
}

/** Runs the command; resolves once the server is up (it keeps the process alive). */
export async function runMcpCommand(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      http: { type: 'string' },
      agent: { type: 'string', default: 'mcp-agent' },
      tier: { type: 'string', default: DEFAULT_TIER },
      name: { type: 'string' },
      dir: { type: 'string' },
      ephemeral: { type: 'boolean' },
      bm25: { type: 'boolean' },
      server: { type: 'string' },
      memory: { type: 'string' },
      'sync-token': { type: 'string' },
      token: { type: 'string' },
      'org-credential': { type: 'string' },
      'vector-weight': { type: 'string' },
      model: { type: 'string' },
      'snippet-length': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  })
  if (values.help) return void process.stdout.write(`${MCP_USAGE}\n`)
  if (!isTier(values.tier)) throw new UsageError(`--tier must be read, read_write or full, not "${values.tier}"`)
  const syncToken = values.token ?? values['sync-token']
  const credential = values['org-credential']
  if (credential !== undefined && (syncToken !== undefined || !values.server || !values.memory)) throw new UsageError('--org-credential needs --server and --memory, and no --token')
  if (values.server && (!values.memory || (!syncToken && !credential))) throw new UsageError('--server needs --memory and --token (or --org-credential)')
  if (values.ephemeral && values.dir) throw new UsageError('--ephemeral and --dir exclude each other')
  if (values.model !== undefined && values.bm25) throw new UsageError('--bm25 and --model exclude each other')
  const http = values.http === undefined ? undefined : /^(127\.0\.0\.1|localhost):(\d{1,5})$/.exec(values.http)
  if (http === null) throw new UsageError('--http takes a loopback HOST:PORT such as 127.0.0.1:8765')

  const name = values.name ? { name: values.name } : {}
  let embedder: Embedder | undefined
  let provider
  if (credential !== undefined) {
    provider = organizationMemoryProvider({ serverUrl: values.server!, memoryId: values.memory!, credential })
  } else if (values.server) {
    const retrieval = replicaRetrieval(values)
    if (values.model !== undefined && retrieval.embedder === BM25_ONLY) throw new UsageError('--model needs --vector-weight: a replica ranks by words alone without it')
    if (retrieval.embedder !== BM25_ONLY) embedder = values.model !== undefined ? await useLiteFrom(values.model) : await createDefaultEmbedder()
    provider = syncedMemoryProvider({ serverUrl: values.server, memoryId: values.memory!, syncToken: syncToken!, ...name, retrieval, ...(embedder ? { embedder } : {}) })
  } else {
    embedder = values.bm25 ? undefined : values.model !== undefined ? await useLiteFrom(values.model) : await createDefaultEmbedder()
    const dir = values.ephemeral ? undefined : resolve(values.dir ?? defaultDataDir())
    provider = localMemoryProvider({ ...name, ...(dir ? { dir } : {}), ...(embedder ? { embedder } : {}) })
  }
  const memory = await provider.memory()
  // The memory's own connection for the token when there is one (made in the app, the library
  // or `cairn connection add`); a server-issued token has none, so the agent gets one of this replica.
  let conn
  if (provider.connect) conn = await provider.connect(credential!)
  else if (values.server) conn = (await memory.connectWithToken(syncToken!).catch(() => null)) ?? (await memory.connect({ agent: values.agent, tier: values.tier, localOnly: true }))
  else conn = values.token ? await memory.connectWithToken(values.token) : await memory.connect({ agent: values.agent, tier: values.tier })
  const shutdown = async (): Promise<void> => {
    await provider.close().catch((e: unknown) => process.stderr.write(`cairn mcp: closing failed: ${(e as Error).message}\n`))
    await embedder?.dispose?.().catch(() => undefined)
    process.exit(0)
  }
  process.once('SIGINT', () => void shutdown())
  process.once('SIGTERM', () => void shutdown())
  const where = values.server ? `replica of ${values.server}` : values.ephemeral ? 'in this process only' : resolve(values.dir ?? defaultDataDir())
  const ranking = memory.info.retrieval.embedder === BM25_ONLY ? 'words' : `words and ${memory.info.retrieval.embedder}`

  if (!http) {
    await createMcpServer(conn, memory).connect(new StdioServerTransport())
    process.stdin.once('end', () => void shutdown())
    process.stderr.write(`cairn mcp: stdio, memory "${memory.info.name}" (${memory.info.id}, ${where}, ranked by ${ranking}), agent ${conn.agent} (${conn.tier})\n`)
    return
  }
  const server = await startHttpMcpServer({ provider, host: '127.0.0.1', port: Number(http[2]) })
  process.stderr.write(`cairn mcp: ${server.url}, memory "${memory.info.name}" (${memory.info.id}, ${where})\n${credential !== undefined ? `send the member credential as the Bearer token (${conn.agent}, read)` : conn.token ? `token (${conn.tier}, shown once): ${conn.token}` : `send the --token connection (${conn.agent}, ${conn.tier}) as the Bearer token`}\n`)
}

export function isUsageError(e: unknown): boolean {
  return e instanceof UsageError
}
