// The `cairn` command: one binary for the MCP server, the sync server and its tokens, and
// moving memories in and out (the official MCP memory server's file, backups, Markdown, JSON).
import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { isMemoryError } from '../core/errors'
import { isUsageError, MCP_USAGE, runMcpCommand } from '../mcp/command'
import { PACKAGE_ROOT } from '../package-root'
import { CONNECTION_USAGE, runConnection } from './connections'
import { EXPORT_USAGE, IMPORT_USAGE, runExport, runImport } from './transfer'

const USAGE = `usage: cairn <command> [options]

  mcp       serve a memory to an MCP client (Claude, Cursor, VS Code...) over stdio or HTTP
  serve     run the sync server that the app and other devices sync through
  token     add, list or revoke the sync server's connection tokens
  org       create organizations on the sync server, add and remove their members
  move-to-redis  move a single sync server's data directory into the Redis several servers share
  connection add, list or revoke the connections of a memory kept in a folder
  import    read an MCP memory server file (memory.jsonl) or a Cairn backup into a memory
  export    write a memory as a Markdown (Obsidian) vault or as JSON
  assets    write the default model and the onnxruntime runtime a browser loads into a folder

cairn <command> --help describes each.`

const SERVE_USAGE = `usage: cairn serve [--host 127.0.0.1] [--port 1234] [--data .data/sync]
       cairn token add --memory <id> --agent <name> [--tier read|read_write|full] [--data DIR]
       cairn token list [--memory <id>] [--data DIR]
       cairn token revoke --id <connection id> [--data DIR]
       cairn org create <name> [--data DIR]
       cairn org add-member --org <org id> (--agent <name> | --device <name>) [--publish] [--data DIR]
       cairn org remove-member --org <org id> --member <member id> [--data DIR]
       cairn org accept --org <org id> --memory <memory id> [--data DIR]
       cairn org unlist --org <org id> --memory <memory id> [--data DIR]
       cairn org list [--data DIR]
       cairn move-to-redis --data DIR --redis redis://host:6379
         moves rooms, tokens, client owners, organizations and the listing into Redis as they are
         (the data directory is left unchanged; safe to run again; exits 1 on a conflict)`

const ASSETS_USAGE = `usage: cairn assets <dir>

Writes models/ (the default embedding model) and ort/ (the onnxruntime wasm runtime) into <dir>,
ready to serve: a browser page loads them from \${BASE_URL}models/ and \${BASE_URL}ort/ by default
(or pass their URLs to createDefaultEmbedder({ baseUrl }) and configureOrt({ wasmPaths })).
With Vite, the cairn-memory/vite plugin does this for you.`

async function runAssets(args: string[]): Promise<void> {
  if (args.includes('--help') || args.includes('-h')) return void process.stdout.write(`${ASSETS_USAGE}\n`)
  const { positionals } = parseArgs({ args, options: {}, allowPositionals: true })
  if (positionals.length !== 1) throw new UsageError('assets takes one folder', ASSETS_USAGE)
  const { writeServedAssets } = await import('../package/assets')
  const dir = resolve(positionals[0]!)
  const written = await writeServedAssets(dir)
  process.stdout.write(`wrote ${written.length} files into ${dir}: ${written.join(', ')}\n`)
}

async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv
  switch (command) {
    case 'mcp':
      return runMcpCommand(rest)
    case 'serve':
    case 'token':
    case 'org':
    case 'move-to-redis':
      if (rest.includes('--help') || rest.includes('-h')) return void process.stdout.write(`${SERVE_USAGE}\n`)
      // The sync server's own command line parses and runs these; it reads process.argv when loaded.
      process.argv = [process.argv[0]!, 'cairn', ...argv]
      await import('../server/cli')
      return
    case 'connection':
      return runConnection(rest)
    case 'import':
      return runImport(rest)
    case 'export':
      return runExport(rest)
    case 'assets':
      return runAssets(rest)
    case undefined:
    case '-h':
    case '--help':
    case 'help':
      return void process.stdout.write(`${USAGE}\n`)
    case '--version':
    case '-v':
      return void process.stdout.write(`${(JSON.parse(readFileSync(new URL('package.json', PACKAGE_ROOT), 'utf8')) as { version: string }).version}\n`)
    default:
      throw new UsageError(`unknown command "${command}"`, USAGE)
  }
}

export class UsageError extends Error {
  constructor(
    message: string,
    readonly usage: string,
  ) {
    super(message)
  }
}

const argv = process.argv.slice(2)
main(argv).catch((e: unknown) => {
  // stdout may be an MCP client's JSON-RPC channel: every complaint goes to stderr
  const usage = e instanceof UsageError ? e.usage : isUsageError(e) ? MCP_USAGE : argv[0] === 'import' ? IMPORT_USAGE : argv[0] === 'connection' ? CONNECTION_USAGE : argv[0] === 'export' ? EXPORT_USAGE : ''
  const message = isMemoryError(e) ? `${e.code}: ${e.message}` : e instanceof Error ? e.message : String(e)
  process.stderr.write(`cairn: ${message}\n${e instanceof TypeError && 'code' in e && String(e.code).startsWith('ERR_PARSE_ARGS') ? `${usage}\n` : e instanceof UsageError ? `${usage}\n` : ''}`)
  process.exit(e instanceof UsageError || isUsageError(e) ? 2 : 1)
})
