// `cairn connection`: the connections of the memory kept in a folder, made, listed and revoked
// from the command line, the same connections the app and the library make. `cairn mcp --dir
// DIR --token TOKEN` then serves an agent with the one it was given instead of a new one.
import { resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { isTier } from '../core/access'
import { MemoryError } from '../core/errors'
import { defaultDataDir } from '../mcp/command'
import { openNodeMemory } from '../node-store/node-memory'
import { createDefaultEmbedder } from '../search/default-embedder'

export const CONNECTION_USAGE = `usage: cairn connection add --agent NAME [--tier read|read_write|full] [--dir PATH]
       cairn connection list [--dir PATH]
       cairn connection revoke --id ID [--dir PATH]

Connections of the memory kept in --dir (default $CAIRN_DIR or ~/.cairn/memory). add prints
the token once; give it to the agent (cairn mcp --dir PATH --token TOKEN). Stop a running
cairn mcp on the folder first.`

export async function runConnection(argv: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { dir: { type: 'string' }, agent: { type: 'string' }, tier: { type: 'string' }, id: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
  })
  if (values.help) return void process.stdout.write(`${CONNECTION_USAGE}\n`)
  const action = positionals[0]
  if (positionals.length !== 1 || (action !== 'add' && action !== 'list' && action !== 'revoke')) throw new MemoryError('invalid_request', 'cairn connection takes add, list or revoke; see cairn connection --help')
  if (action === 'add' && !values.agent) throw new MemoryError('invalid_request', 'cairn connection add needs --agent NAME')
  if (action === 'add' && values.tier !== undefined && !isTier(values.tier)) throw new MemoryError('invalid_request', `--tier must be read, read_write or full, not "${values.tier}"`)
  if (action === 'revoke' && !values.id) throw new MemoryError('invalid_request', 'cairn connection revoke needs --id ID (see cairn connection list)')
  const embedder = await createDefaultEmbedder()
  const opened = await openNodeMemory(resolve(values.dir ?? defaultDataDir()), { embedder })
  try {
    const { memory } = opened
    if (action === 'add') {
      const conn = await memory.connect({ agent: values.agent!, ...(values.tier ? { tier: values.tier as 'read' } : {}) })
      process.stdout.write(`${conn.id} ${conn.agent} (${conn.tier}) of memory ${memory.info.id}\ntoken (shown once): ${conn.token}\n`)
    } else if (action === 'list') {
      for (const c of memory.listConnections()) process.stdout.write(`${c.id}\t${c.agent}\t${c.tier}\tcreated ${c.createdAt}${c.revokedAt ? `\trevoked ${c.revokedAt}` : ''}\n`)
    } else {
      await memory.revoke(values.id!)
      process.stdout.write(`revoked ${values.id}\n`)
    }
  } finally {
    await opened.close()
    await embedder.dispose?.()
  }
}
