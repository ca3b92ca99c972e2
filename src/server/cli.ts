// Command line of the sync server.
//   node --import tsx src/server/cli.ts --host 127.0.0.1 --port 1234 --data .data/sync
//   node --import tsx src/server/cli.ts token add --memory M --tier read_write --agent A [--data DIR]
//   node --import tsx src/server/cli.ts token revoke --id conn_... [--data DIR]
//   node --import tsx src/server/cli.ts token list [--memory M] [--data DIR]
// Token commands edit <data>/tokens.json; a running server picks the change up at once.
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { isTier } from '../core/access'
import { isMemoryError } from '../core/errors'
import { startSyncServer } from './sync-server'
import { TOKENS_FILE, TokenRegistry } from './token-registry'

const USAGE = `usage:
  cli.ts [serve] [--host 127.0.0.1] [--port 1234] [--data .data/sync]
  cli.ts token add --memory <id> --agent <name> [--tier read|read_write|full] [--data DIR]
  cli.ts token revoke --id <connection id> [--data DIR]
  cli.ts token list [--memory <id>] [--data DIR]`

async function main(argv: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      host: { type: 'string', default: '127.0.0.1' },
      port: { type: 'string', default: '1234' },
      data: { type: 'string', default: '.data/sync' },
      memory: { type: 'string' },
      tier: { type: 'string', default: 'read_write' },
      agent: { type: 'string' },
      id: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  })
  if (values.help) {
    console.log(USAGE)
    return
  }
  const [command = 'serve', sub] = positionals
  const dataDir = values.data

  if (command === 'token') {
    const registry = new TokenRegistry(join(dataDir, TOKENS_FILE))
    if (sub === 'add') {
      if (!values.memory || !values.agent) throw new Error(`token add needs --memory and --agent\n${USAGE}`)
      if (!isTier(values.tier)) throw new Error('--tier must be read, read_write or full')
      const { token, connection } = registry.add({ memoryId: values.memory, agent: values.agent, tier: values.tier })
      console.log(`connection ${connection.id}: ${connection.agent} -> ${connection.memoryId} (${connection.tier})`)
      console.log(`token (shown once, keep it secret): ${token}`)
      return
    }
    if (sub === 'revoke') {
      if (!values.id) throw new Error(`token revoke needs --id\n${USAGE}`)
      const c = registry.revoke(values.id)
      console.log(`revoked ${c.id} (${c.agent} -> ${c.memoryId}) at ${c.revokedAt}`)
      return
    }
    if (sub === 'list') {
      const rows = registry.list(values.memory).map(({ tokenHash: _hash, ...c }) => c)
      console.table(rows)
      return
    }
    throw new Error(USAGE)
  }

  if (command !== 'serve') throw new Error(USAGE)
  const port = Number(values.port)
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error('--port must be a number from 0 to 65535')
  const server = await startSyncServer({ host: values.host, port, dataDir })
  console.log(`Cairn sync server on ${server.url} (data: ${dataDir})`)
  const stop = () => {
    server.close().then(() => process.exit(0), (err: unknown) => {
      console.error(err)
      process.exit(1)
    })
  }
  process.once('SIGINT', stop)
  process.once('SIGTERM', stop)
}

main(process.argv.slice(2)).catch((err: unknown) => {
  console.error(isMemoryError(err) ? `${err.code}: ${err.message}` : (err as Error).message)
  process.exit(1)
})
