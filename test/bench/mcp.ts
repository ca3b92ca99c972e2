// MCP round trip: the recall tool called through the real server (`src/mcp/cli.ts`) over stdio
// and over Streamable HTTP on 127.0.0.1, against the same call through dispatchTool in-process,
// so a row shows what the transport adds to a recall.
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { Observation } from '../../src/core/types'
import { localMemoryProvider } from '../../src/mcp/provider'
import { dispatchTool } from '../../src/tools/dispatch'
import { observationFor } from './engine'
import { stampObservations } from './stamped'
import { percentile } from './stats'
import { engineOf } from '../../src/internals'

const REPO = fileURLToPath(new URL('../../', import.meta.url))
const CLI = fileURLToPath(new URL('../../src/mcp/cli.ts', import.meta.url))
const WARMUP = 10

export interface McpBenchRow {
  transport: 'in-process' | 'stdio' | 'http'
  observations: number
  entities: number
  queries: number
  p50Ms: number
  p95Ms: number
  /** this transport's p50 / the in-process dispatchTool p50 */
  vsInProcessP50: number
  /** UTF-8 bytes of the tool result's JSON text, median over the queries */
  payloadP50Bytes: number
  /** spawn (or open) until the first answer: loading the --dir snapshot included */
  startMs: number
}

/** ~100 recall queries an agent might send: two or four words of a description, or a name. */
function queries(obs: Observation[], count = 100): Array<Record<string, unknown>> {
  const out: Array<Record<string, unknown>> = []
  for (let q = 0; q < count; q++) {
    const o = obs[(q * 7919) % obs.length]!
    const e = o.entities[q % o.entities.length]!
    const words = e.description.split(' ')
    if (q % 3 === 0) out.push({ query: e.name })
    else if (q % 3 === 1) out.push({ query: `${words[1]} ${words[4]}` })
    else out.push({ query: words.slice(2, 6).join(' ') })
  }
  return out
}

async function timeCalls(call: (args: Record<string, unknown>) => Promise<string>, qs: Array<Record<string, unknown>>): Promise<{ ms: number[]; bytes: number[] }> {
  for (const args of qs.slice(0, WARMUP)) await call(args)
  const ms: number[] = []
  const bytes: number[] = []
  for (const args of qs) {
    const t = performance.now()
    const text = await call(args)
    ms.push(performance.now() - t)
    bytes.push(Buffer.byteLength(text, 'utf8'))
  }
  return { ms, bytes }
}

async function mcpText(client: Client, args: Record<string, unknown>): Promise<string> {
  const r = (await client.callTool({ name: 'recall', arguments: args })) as { isError?: boolean; content: Array<{ type: string; text: string }> }
  const text = r.content[0]?.text ?? ''
  if (r.isError) throw new Error(`recall failed over MCP: ${text}`)
  return text
}

/** Waits for the HTTP server's URL and token on its stderr (stdout is not used in HTTP mode). */
function httpEndpoint(child: ChildProcess, timeoutMs = 120_000): Promise<{ url: string; token: string }> {
  return new Promise((resolve, reject) => {
    let seen = ''
    const timer = setTimeout(() => done(new Error(`the MCP server printed no URL and token within ${timeoutMs} ms: ${seen.slice(-500)}`)), timeoutMs)
    const onData = (chunk: Buffer): void => {
      seen += chunk.toString('utf8')
      const url = /cairn mcp: (http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(seen)?.[1]
      const token = /token \([a-z_]+, shown once\): (\S+)/.exec(seen)?.[1]
      if (url && token) done(undefined, { url, token })
    }
    const onExit = (code: number | null): void => done(new Error(`the MCP server exited (${code}) before listening: ${seen.slice(-500)}`))
    function done(err: Error | undefined, value?: { url: string; token: string }): void {
      clearTimeout(timer)
      child.stderr!.off('data', onData)
      child.off('exit', onExit)
      if (err) reject(err)
      else resolve(value!)
    }
    child.stderr!.on('data', onData)
    child.once('exit', onExit)
  })
}

/** SIGTERM (the CLI closes its memory and exits), then SIGKILL if it lingers. */
async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  child.kill('SIGTERM')
  const timer = setTimeout(() => child.kill('SIGKILL'), 5_000)
  await exited
  clearTimeout(timer)
}

async function exited(pid: number): Promise<void> {
  for (let i = 0; i < 100; i++) {
    try {
      process.kill(pid, 0)
    } catch {
      return
    }
    await new Promise((r) => setTimeout(r, 50))
  }
}

const cliArgs = (dir: string, extra: string[]): string[] => ['--import', 'tsx', CLI, '--dir', dir, '--tier', 'read', '--agent', 'bench', ...extra]

export interface McpBenchOptions {
  /** Told each server process id as it starts (the test checks they are all gone at the end). */
  onServer?: (pid: number) => void
}

export async function benchMcp(sizes: number[], options: McpBenchOptions = {}): Promise<McpBenchRow[]> {
  const rows: McpBenchRow[] = []
  const children = new Set<ChildProcess>()
  // a bench interrupted between spawn and stop must not leave a server behind
  const killAll = (): void => {
    for (const c of children) c.kill('SIGKILL')
  }
  process.once('exit', killAll)
  try {
    for (const n of sizes) {
      const dir = await mkdtemp(join(tmpdir(), 'cairn-bench-mcp-'))
      try {
        const obs = stampObservations(Array.from({ length: n }, (_, i) => observationFor(i, Math.max(10, n))))
        const qs = queries(obs)
        const sized = (r: Omit<McpBenchRow, 'observations' | 'queries' | 'vsInProcessP50'>, base?: number): McpBenchRow => ({
          transport: r.transport,
          observations: n,
          entities: r.entities,
          queries: qs.length,
          p50Ms: r.p50Ms,
          p95Ms: r.p95Ms,
          vsInProcessP50: base ? Math.round((r.p50Ms / base) * 100) / 100 : 1,
          payloadP50Bytes: r.payloadP50Bytes,
          startMs: r.startMs,
        })

        // In-process: the provider the server uses, filled once; closing it writes dir/memory.json.
        const t0 = performance.now()
        const provider = localMemoryProvider({ dir, name: `bench-${n}` })
        let base: McpBenchRow
        try {
          const memory = await provider.memory()
          await engineOf(memory).importObservations(obs, [])
          const conn = await memory.connect({ agent: 'bench', tier: 'read' })
          const startMs = Math.round(performance.now() - t0)
          const run = await timeCalls(async (args) => {
            const out = await dispatchTool(conn, 'recall', args)
            if (!out.ok) throw new Error(`recall failed: ${out.error.message}`)
            return JSON.stringify(out.result)
          }, qs)
          base = sized({ transport: 'in-process', entities: engineOf(memory).committedGraph.entities.size, p50Ms: percentile(run.ms, 50), p95Ms: percentile(run.ms, 95), payloadP50Bytes: percentile(run.bytes, 50), startMs })
        } finally {
          await provider.close()
        }
        rows.push(base)

        // stdio: the SDK client spawns the server and owns its process.
        const s0 = performance.now()
        const stdio = new StdioClientTransport({ command: process.execPath, args: cliArgs(dir, []), cwd: REPO, env: getDefaultEnvironment(), stderr: 'pipe' })
        let stdioErr = ''
        stdio.stderr?.on('data', (c: Buffer) => void (stdioErr = (stdioErr + c.toString('utf8')).slice(-2_000)))
        const stdioClient = new Client({ name: 'cairn-bench', version: '0' })
        try {
          await stdioClient.connect(stdio).catch((e: unknown) => {
            throw new Error(`the stdio MCP server did not start: ${(e as Error).message}; stderr: ${stdioErr}`)
          })
          if (stdio.pid !== null) options.onServer?.(stdio.pid)
          await mcpText(stdioClient, qs[0]!)
          const startMs = Math.round(performance.now() - s0)
          const run = await timeCalls((args) => mcpText(stdioClient, args), qs)
          rows.push(sized({ transport: 'stdio', entities: base.entities, p50Ms: percentile(run.ms, 50), p95Ms: percentile(run.ms, 95), payloadP50Bytes: percentile(run.bytes, 50), startMs }, base.p50Ms))
        } finally {
          await stdioClient.close().catch(() => undefined)
          // the next server opens the same folder, which one process holds at a time
          if (stdio.pid !== null) await exited(stdio.pid)
        }

        // Streamable HTTP: the server runs as its own process on a free loopback port.
        const h0 = performance.now()
        const child = spawn(process.execPath, cliArgs(dir, ['--http', '127.0.0.1:0']), { cwd: REPO, stdio: ['ignore', 'ignore', 'pipe'] })
        children.add(child)
        if (child.pid !== undefined) options.onServer?.(child.pid)
        const httpClient = new Client({ name: 'cairn-bench', version: '0' })
        try {
          const { url, token } = await httpEndpoint(child)
          await httpClient.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }))
          await mcpText(httpClient, qs[0]!)
          const startMs = Math.round(performance.now() - h0)
          const run = await timeCalls((args) => mcpText(httpClient, args), qs)
          rows.push(sized({ transport: 'http', entities: base.entities, p50Ms: percentile(run.ms, 50), p95Ms: percentile(run.ms, 95), payloadP50Bytes: percentile(run.bytes, 50), startMs }, base.p50Ms))
        } finally {
          await httpClient.close().catch(() => undefined)
          await stop(child)
          children.delete(child)
        }
      } finally {
        await rm(dir, { recursive: true, force: true })
      }
    }
  } finally {
    killAll()
    process.off('exit', killAll)
  }
  return rows
}
