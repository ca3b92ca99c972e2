// Command line of the sync server.
//   node --import tsx src/server/cli.ts --host 127.0.0.1 --port 1234 --data .data/sync [--claim-key-file FILE]
//   node --import tsx src/server/cli.ts token add --memory M --tier read_write --agent A [--data DIR]
//   node --import tsx src/server/cli.ts token revoke --id conn_... [--data DIR]
//   node --import tsx src/server/cli.ts token list [--memory M] [--data DIR]
//   node --import tsx src/server/cli.ts org create NAME [--data DIR]
//   node --import tsx src/server/cli.ts org add-member --org ORG (--agent NAME | --device NAME) [--publish] [--data DIR]
//   node --import tsx src/server/cli.ts org remove-member --org ORG --member MEMBER [--data DIR]
//   node --import tsx src/server/cli.ts org accept --org ORG --memory MEMORY [--data DIR]
//   node --import tsx src/server/cli.ts org unlist --org ORG --memory MEMORY [--data DIR]
//   node --import tsx src/server/cli.ts org list [--data DIR]
//   node --import tsx src/server/cli.ts move-to-redis --data DIR --redis URL
//   ... --redis redis://127.0.0.1:6379   rooms, tokens and organizations in a Redis shared by several servers
// Token commands edit <data>/tokens.json (or Redis), org commands <data>/orgs.json (or Redis);
// a running server picks the change up at once (every server, on Redis).
import { mkdirSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { parseArgs } from 'node:util'
import { isTier } from '../core/access'
import { isMemoryError, MemoryError } from '../core/errors'
import type { TokenAdmin } from './access-source'
import { claimKeyIn } from './claim'
import { startSyncServer } from './sync-server'
import { TOKENS_FILE, TokenRegistry } from './token-registry'
import { ORGS_FILE, OrgRegistry } from './org-registry'
import { fileOrgSource, type OrgDirectory } from './org-store'

const USAGE = `usage:
  cli.ts [serve] [--host 127.0.0.1] [--port 1234] [--data .data/sync | --redis redis://host:6379] [--claim-key-file FILE]
    --claim-key-file: the key (made in FILE if missing) that lets the app bring a memory here the first time
  cli.ts token add --memory <id> --agent <name> [--tier read|read_write|full] [--data DIR | --redis URL]
  cli.ts token revoke --id <connection id> [--data DIR | --redis URL]
  cli.ts token list [--memory <id>] [--data DIR | --redis URL]
  cli.ts org create <name> [--data DIR | --redis URL]
  cli.ts org add-member --org <org id> (--agent <name> | --device <name>) [--publish] [--data DIR | --redis URL]
  cli.ts org remove-member --org <org id> --member <member id> [--data DIR | --redis URL]
  cli.ts org accept --org <org id> --memory <memory id> [--data DIR | --redis URL]
  cli.ts org unlist --org <org id> --memory <memory id> [--data DIR | --redis URL]
  cli.ts org list [--data DIR | --redis URL]
  cli.ts move-to-redis --data DIR --redis URL
    moves a single server's rooms, tokens, client owners, organizations and listing into Redis
    (the data directory is left as it is; safe to run again; exits 1 on a conflict, after moving the rest)`

/** The token directory the commands edit: the data directory's file, or Redis. */
async function openTokens(dataDir: string, redisUrl: string | undefined): Promise<TokenAdmin & { close(): Promise<void> }> {
  if (redisUrl === undefined) {
    const registry = new TokenRegistry(join(dataDir, TOKENS_FILE))
    return {
      add: async (input) => registry.add(input),
      revoke: async (id) => registry.revoke(id),
      list: async (memoryId) => registry.list(memoryId),
      close: async () => {},
    }
  }
  const { connectRedis } = await import('./redis-connection')
  const { RedisAccess } = await import('./redis-access')
  const redis = await connectRedis(redisUrl, { durability: 'trust' })
  const access = await RedisAccess.open(redis, { watch: false })
  return {
    add: (input) => access.add(input),
    revoke: (id) => access.revoke(id),
    list: (memoryId) => access.list(memoryId),
    close: () => redis.close(),
  }
}

/** The organizations the commands edit: the data directory's file, or Redis. */
async function openOrgs(dataDir: string, redisUrl: string | undefined): Promise<OrgDirectory & { close(): Promise<void> }> {
  if (redisUrl === undefined) return fileOrgSource(new OrgRegistry(join(dataDir, ORGS_FILE)))
  const { connectRedis } = await import('./redis-connection')
  const { RedisOrgs } = await import('./redis-orgs')
  const redis = await connectRedis(redisUrl, { durability: 'trust' })
  const orgs = await RedisOrgs.open(redis, { watch: false })
  return {
    create: (name) => orgs.create(name),
    addMember: (orgId, input) => orgs.addMember(orgId, input),
    removeMember: (orgId, memberId) => orgs.removeMember(orgId, memberId),
    list: () => orgs.list(),
    accept: (orgId, memoryId, by) => orgs.accept(orgId, memoryId, by),
    unlist: (orgId, memoryId) => orgs.unlist(orgId, memoryId),
    close: () => redis.close(),
  }
}

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
      redis: { type: 'string' },
      org: { type: 'string' },
      device: { type: 'string' },
      member: { type: 'string' },
      // a member that may publish memories it owns into the listing (POST /org/memories)
      publish: { type: 'boolean', default: false },
      'claim-key-file': { type: 'string' },
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
    const registry = await openTokens(dataDir, values.redis)
    try {
      await tokenCommand(registry, sub, values)
    } finally {
      await registry.close()
    }
    return
  }

  if (command === 'org') {
    const orgs = await openOrgs(dataDir, values.redis)
    try {
      await orgCommand(orgs, sub, positionals.slice(2), values)
    } finally {
      await orgs.close()
    }
    return
  }

  if (command === 'move-to-redis') {
    if (values.redis === undefined) throw new Error(`move-to-redis needs --redis\n${USAGE}`)
    const { conflictsIn, describeMove, moveToRedis } = await import('./move-to-redis')
    const report = await moveToRedis({ dataDir, redis: values.redis })
    for (const line of describeMove(report)) console.log(line)
    const conflicts = conflictsIn(report)
    if (conflicts > 0) throw new MemoryError('conflict', `${conflicts} record(s) differ from what Redis holds under the same id and were not moved (listed above); everything else was`)
    return
  }

  if (command !== 'serve') throw new Error(USAGE)
  const port = Number(values.port)
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error('--port must be a number from 0 to 65535')
  const claimFile = values['claim-key-file']
  if (claimFile !== undefined) mkdirSync(dirname(claimFile), { recursive: true })
  const claimKey = claimFile === undefined ? undefined : claimKeyIn(claimFile)
  const server = await startSyncServer({ host: values.host, port, dataDir, redis: values.redis, ...(claimKey ? { claimKey } : {}) })
  console.log(`Cairn sync server on ${server.url} (${values.redis === undefined ? `data: ${dataDir}` : `redis: ${new URL(values.redis).host}`})`)
  if (claimKey) {
    console.log(`  Claim key (kept in ${claimFile}; share it with no one): ${claimKey}`)
    console.log('  A memory\'s first device: Memory menu > Sync with a server, this server and the claim key as the token.')
    console.log('  Its other devices: "Open on another device" there, then open the link or paste the join code.')
  }
  const stop = () => {
    server.close().then(() => process.exit(0), (err: unknown) => {
      console.error(err)
      process.exit(1)
    })
  }
  process.once('SIGINT', stop)
  process.once('SIGTERM', stop)
}

async function tokenCommand(registry: TokenAdmin, sub: string | undefined, values: { memory?: string; agent?: string; tier: string; id?: string }): Promise<void> {
  if (sub === 'add') {
    if (!values.memory || !values.agent) throw new Error(`token add needs --memory and --agent\n${USAGE}`)
    if (!isTier(values.tier)) throw new Error('--tier must be read, read_write or full')
    const { token, connection } = await registry.add({ memoryId: values.memory, agent: values.agent, tier: values.tier })
    console.log(`connection ${connection.id}: ${connection.agent} -> ${connection.memoryId} (${connection.tier})`)
    console.log(`token (shown once, keep it secret): ${token}`)
    return
  }
  if (sub === 'revoke') {
    if (!values.id) throw new Error(`token revoke needs --id\n${USAGE}`)
    const c = await registry.revoke(values.id)
    console.log(`revoked ${c.id} (${c.agent} -> ${c.memoryId}) at ${c.revokedAt}`)
    return
  }
  if (sub === 'list') {
    const rows = (await registry.list(values.memory)).map(({ tokenHash: _hash, ...c }) => c)
    console.table(rows)
    return
  }
  throw new Error(USAGE)
}

async function orgCommand(orgs: OrgDirectory, sub: string | undefined, rest: string[], values: { org?: string; agent?: string; device?: string; member?: string; memory?: string; publish?: boolean }): Promise<void> {
  if (sub === 'create') {
    if (!rest.length) throw new Error(`org create needs a name\n${USAGE}`)
    const org = await orgs.create(rest.join(' '))
    console.log(`organization ${org.id}: ${org.name}`)
    return
  }
  if (sub === 'add-member') {
    if (!values.org || (values.agent === undefined) === (values.device === undefined)) throw new Error(`org add-member needs --org and one of --agent or --device\n${USAGE}`)
    const kind = values.agent !== undefined ? 'agent' : 'device'
    const { credential, member, org } = await orgs.addMember(values.org, { kind, name: (values.agent ?? values.device)!, mayPublish: values.publish === true })
    console.log(`member ${member.id}: ${member.kind} ${member.name} of ${org.id} (${org.name})${member.mayPublish ? ', may publish memories it owns' : ''}`)
    console.log(`credential (shown once, keep it secret): ${credential}`)
    return
  }
  if (sub === 'remove-member') {
    if (!values.org || !values.member) throw new Error(`org remove-member needs --org and --member\n${USAGE}`)
    const m = await orgs.removeMember(values.org, values.member)
    console.log(`removed ${m.id} (${m.kind} ${m.name}) at ${m.removedAt}`)
    return
  }
  if (sub === 'accept' || sub === 'unlist') {
    if (!values.org || !values.memory) throw new Error(`org ${sub} needs --org and --memory\n${USAGE}`)
    if (sub === 'accept') console.log(`memory ${values.memory} accepted into ${values.org}'s listing at ${(await orgs.accept(values.org, values.memory)).acceptedAt}`)
    else {
      await orgs.unlist(values.org, values.memory)
      console.log(`memory ${values.memory} is no longer in ${values.org}'s listing`)
    }
    return
  }
  if (sub === 'list') {
    const all = await orgs.list()
    for (const o of all) for (const l of o.listed ?? []) console.log(`${o.id} lists memory ${l.memoryId} (accepted ${l.acceptedAt}${l.acceptedBy ? ` by member ${l.acceptedBy}` : ''})`)
    const rows = all.flatMap((o): Array<Record<string, string | null>> => o.members.length
      ? o.members.map((m) => ({ org: o.id, name: o.name, member: m.id, kind: m.kind, memberName: m.name, addedAt: m.addedAt, removedAt: m.removedAt }))
      : [{ org: o.id, name: o.name, member: '', kind: '', memberName: '', addedAt: '', removedAt: null }])
    console.table(rows)
    return
  }
  throw new Error(USAGE)
}

main(process.argv.slice(2)).catch((err: unknown) => {
  console.error(isMemoryError(err) ? `${err.code}: ${err.message}` : (err as Error).message)
  process.exit(1)
})
