// Organizations shared by sync servers through a real Redis (a throwaway redis-server on
// 127.0.0.1): a cut made through one server (a member removed, a memory unlisted) closes the
// sockets on every other one and refuses the credential there; a member's publishing through
// one server is consent every other one honors; a server whose subscription
// dropped while a change was made re-reads the registry when it reconnects; concurrent changes
// to one organization all land; the CLI's `org ... --redis` acts on running servers; and with
// one server process and Redis SIGKILLed mid-run, every acknowledged change survives and the
// cut state is right afterwards.
import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { createServer } from 'node:net'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import { WebSocket } from 'ws'
import { silentLog } from '../../src/server/log'
import type { Organization } from '../../src/server/org-registry'
import { connectRedis } from '../../src/server/redis-connection'
import { RedisOrgs } from '../../src/server/redis-orgs'
import { startSyncServer, type SyncServer } from '../../src/server/sync-server'
import { connectMemoryDoc, type SyncClient } from '../../src/sync/client'
import { denied, listing } from '../support/sync-denials'
import { CLOSE } from '../../src/sync/close-codes'
import { createMemoryDoc, readMemoryDoc } from '../../src/sync/memory-doc'
import { writeVisibility } from '../../src/sync/visibility'
import { putObservation } from '../helpers/doc-writes'
import { startRedis } from '../support/redis'
import { redisPerFile } from '../support/redis-per-file'
import { observation, waitFor } from '../sync/fixture'

/** Like `waitFor`, for a check that asks a server. */
async function until(what: string, check: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 20))
  }
}

const shared = redisPerFile('o')
const { cleanups, newPrefix } = shared

async function server(url: string, prefix: string): Promise<SyncServer> {
  const dataDir = mkdtempSync(join(tmpdir(), 'cairn-org-redis-'))
  const s = await startSyncServer({ dataDir, port: 0, redis: { url, prefix }, log: silentLog })
  cleanups.push(async () => {
    await s.close()
    rmSync(dataDir, { recursive: true, force: true })
  })
  return s
}

function client(url: string, memoryId: string, token: string): SyncClient {
  const c = connectMemoryDoc({ serverUrl: url, memoryId, token, doc: createMemoryDoc(), WebSocketPolyfill: WebSocket, crossTab: false, maxBackoffMs: 100 })
  cleanups.push(() => c.destroy())
  return c
}

/** An organization-visible memory with a note, written through `s` by its owner, accepted into the listing. */
async function orgMemory(s: SyncServer, org: Organization, memoryId: string): Promise<SyncClient> {
  const owner = client(s.url, memoryId, (await s.access.add({ memoryId, tier: 'full', agent: `owner of ${memoryId}` })).token)
  await owner.whenSynced()
  putObservation(owner.provider.doc, observation(`${memoryId}-note`))
  writeVisibility(owner.provider.doc, { visibility: 'organization', orgId: org.id, name: memoryId })
  await until('the index to show it', async () => (await s.organizations.memories(org.id)).some((m) => m.id === memoryId))
  await s.organizations.accept(org.id, memoryId)
  return owner
}

describe('organizations on servers sharing Redis', () => {
  it('a member added on A reads through C; removed on A, its sockets on B and C close and its credential is refused everywhere', async () => {
    const prefix = newPrefix()
    const [a, b, c] = [await server(shared.redis.url, prefix), await server(shared.redis.url, prefix), await server(shared.redis.url, prefix)]
    const org = await a.organizations.create('Acme')
    await orgMemory(a, org, 'handbook')
    const leaving = await a.organizations.addMember(org.id, { kind: 'agent', name: 'leaving' })
    const staying = await a.organizations.addMember(org.id, { kind: 'agent', name: 'staying' })
    // added on A, read through C and listed there, without a restart or a reload
    const onC = client(c.url, 'handbook', leaving.credential)
    const onB = client(b.url, 'handbook', leaving.credential)
    const other = client(c.url, 'handbook', staying.credential)
    await Promise.all([onC.whenSynced(), onB.whenSynced(), other.whenSynced()])
    await waitFor('the note on C', () => readMemoryDoc(onC.provider.doc).observations.has('handbook-note'))
    expect(await listing(c.url, leaving.credential)).toEqual({ status: 200, ids: ['handbook'] })

    const closes = [denied(onB), denied(onC)]
    const started = performance.now()
    const closedAt: number[] = []
    for (const p of closes) void p.then(() => closedAt.push(performance.now() - started))
    await a.organizations.removeMember(org.id, leaving.member.id)
    expect(await Promise.all(closes)).toEqual([CLOSE.memberRemoved, CLOSE.memberRemoved])
    console.info(`member removed on A: its sockets on B and C closed ${closedAt.map((t) => t.toFixed(1)).join(' / ')} ms after the call`)
    for (const s of [a, b, c]) {
      expect(await denied(client(s.url, 'handbook', leaving.credential))).toBe(CLOSE.memberRemoved)
      expect((await listing(s.url, leaving.credential)).status).toBe(403)
    }
    // the other member is untouched
    expect(other.status.state).toBe('online')
  })

  it('a memory unlisted on A closes members\' sockets to it on B and leaves it out of every listing', async () => {
    const prefix = newPrefix()
    const [a, b] = [await server(shared.redis.url, prefix), await server(shared.redis.url, prefix)]
    const org = await a.organizations.create('Acme')
    await orgMemory(a, org, 'notes')
    const { credential } = await b.organizations.addMember(org.id, { kind: 'device', name: 'laptop' })
    const reader = client(b.url, 'notes', credential)
    await reader.whenSynced()
    const closed = denied(reader)
    await a.organizations.unlist(org.id, 'notes')
    expect(await closed).toBe(CLOSE.notVisible)
    expect(await denied(client(b.url, 'notes', credential))).toBe(CLOSE.forbidden)
    expect(await listing(b.url, credential)).toEqual({ status: 200, ids: [] })
  })

  it('a memory made private through A closes members\' sockets on B, which hides it from the listing', async () => {
    const prefix = newPrefix()
    const [a, b] = [await server(shared.redis.url, prefix), await server(shared.redis.url, prefix)]
    const org = await a.organizations.create('Acme')
    const owner = await orgMemory(a, org, 'plans')
    const { credential } = await a.organizations.addMember(org.id, { kind: 'agent', name: 'reader' })
    const reader = client(b.url, 'plans', credential)
    await reader.whenSynced()
    const closed = denied(reader)
    writeVisibility(owner.provider.doc, { visibility: 'private', orgId: null, name: 'plans' })
    expect(await closed).toBe(CLOSE.notVisible)
    await until('the index to drop it', async () => (await listing(b.url, credential)).ids.length === 0)
    expect(await denied(client(b.url, 'plans', credential))).toBe(CLOSE.forbidden)
  })

  it('a member with the right to publish puts its memory into the listing through B; members list and open it through C, and a stranger\'s is neither', async () => {
    const prefix = newPrefix()
    const [a, b, c] = [await server(shared.redis.url, prefix), await server(shared.redis.url, prefix), await server(shared.redis.url, prefix)]
    const org = await a.organizations.create('Acme')
    const publisher = await a.organizations.addMember(org.id, { kind: 'device', name: 'owner laptop', mayPublish: true })
    const reader = await a.organizations.addMember(org.id, { kind: 'agent', name: 'reader' })
    const publish = async (memoryId: string) => {
      const token = (await a.access.add({ memoryId, tier: 'full', agent: `owner of ${memoryId}` })).token
      const owner = client(a.url, memoryId, token)
      await owner.whenSynced()
      putObservation(owner.provider.doc, observation(`${memoryId}-note`))
      writeVisibility(owner.provider.doc, { visibility: 'organization', orgId: org.id, name: memoryId })
      await until('the index to show it', async () => (await a.organizations.memories(org.id)).some((m) => m.id === memoryId))
      return token
    }
    const token = await publish('playbook')
    await publish('stranger-notes')
    const res = await fetch(`${b.url.replace(/^ws/, 'http')}/org/memories`, { method: 'POST', headers: { authorization: `Bearer ${publisher.credential}`, 'content-type': 'application/json' }, body: JSON.stringify({ memoryId: 'playbook', token }) })
    expect(res.status).toBe(200)
    expect(await listing(c.url, reader.credential)).toEqual({ status: 200, ids: ['playbook'] })
    expect((await c.organizations.list()).find((o) => o.id === org.id)?.listed?.map((l) => [l.memoryId, l.acceptedBy])).toEqual([['playbook', publisher.member.id]])
    await client(c.url, 'playbook', reader.credential).whenSynced()
    expect(await denied(client(c.url, 'stranger-notes', reader.credential))).toBe(CLOSE.forbidden)
  })

  it('a server that missed a change while its subscription was down re-reads the registry when it reconnects', async () => {
    const prefix = newPrefix()
    const b = await server(shared.redis.url, prefix)
    const conn = await connectRedis(shared.redis.url)
    cleanups.push(() => conn.close())
    const admin = await RedisOrgs.open(conn, { prefix, watch: false })
    const org = await admin.create('Acme')
    await orgMemory(b, org, 'missed')
    const { credential, member } = await admin.addMember(org.id, { kind: 'agent', name: 'reader' })
    const reader = client(b.url, 'missed', credential)
    await reader.whenSynced()
    // the removal reaches Redis with no message on the channel: as if B's subscription had been down when it was published
    const raw = await conn.command.sendCommand<Buffer>(['HGET', `${prefix}orgs`, org.id])
    const record = JSON.parse(raw.toString()) as { rev: number; org: Organization }
    record.org.members.find((m) => m.id === member.id)!.removedAt = new Date().toISOString()
    await conn.command.sendCommand(['HSET', `${prefix}orgs`, org.id, JSON.stringify({ rev: record.rev + 1, org: record.org })])
    await new Promise((r) => setTimeout(r, 200))
    // B did not hear of it: the socket is still open
    expect(reader.status.state).toBe('online')
    const closed = denied(reader)
    await conn.command.sendCommand(['CLIENT', 'KILL', 'TYPE', 'pubsub'])
    expect(await closed).toBe(CLOSE.memberRemoved)
  })

  it('concurrent changes to one organization through several servers all land', async () => {
    const prefix = newPrefix()
    const servers = [await server(shared.redis.url, prefix), await server(shared.redis.url, prefix), await server(shared.redis.url, prefix)]
    const org = await servers[0]!.organizations.create('Acme')
    const added = await Promise.all(Array.from({ length: 24 }, (_, i) => servers[i % 3]!.organizations.addMember(org.id, { kind: 'agent', name: `agent ${i}` })))
    const listed = await Promise.all(Array.from({ length: 6 }, (_, i) => servers[(i + 1) % 3]!.organizations.accept(org.id, `memory-${i}`)))
    const found = (await servers[2]!.organizations.list()).find((o) => o.id === org.id)!
    expect(found.members.map((m) => m.id).sort()).toEqual(added.map((a) => a.member.id).sort())
    expect((found.listed ?? []).map((l) => l.memoryId).sort()).toEqual(listed.map((l) => l.memoryId).sort())
  })

  it('a change while Redis is down fails with storage_failed after its timeout, and works again once Redis is back', async () => {
    const own = await startRedis()
    cleanups.push(() => own.stop())
    const conn = await connectRedis(own.url)
    cleanups.push(() => conn.close())
    const orgs = await RedisOrgs.open(conn, { watch: false, changeTimeoutMs: 500 })
    const org = await orgs.create('Acme')
    await own.kill()
    await expect(orgs.addMember(org.id, { kind: 'agent', name: 'while down' })).rejects.toMatchObject({ code: 'storage_failed' })
    await own.start()
    await waitFor('the connection back', () => conn.command.isReady, 10_000)
    const added = await orgs.addMember(org.id, { kind: 'agent', name: 'after' })
    expect((await orgs.list())[0]!.members.map((m) => m.id)).toContain(added.member.id)
  }, 30_000)

  it('the CLI creates organizations and adds and removes members in Redis, and running servers follow', async () => {
    const prefix = 'cairn:'
    const s = await server(shared.redis.url, prefix)
    const run = (...args: string[]) => promisify(execFile)('node', ['--import', 'tsx', 'src/server/cli.ts', 'org', ...args, '--redis', shared.redis.url])
    const orgId = /organization (org-[0-9a-f]+)/.exec((await run('create', 'CLI', 'org')).stdout)?.[1]
    expect(orgId).toBeDefined()
    await orgMemory(s, (await s.organizations.list()).find((o) => o.id === orgId)!, 'cli-memory')
    const added = (await run('add-member', '--org', orgId!, '--agent', 'cli agent')).stdout
    const memberId = /member (mem-[0-9a-f]+)/.exec(added)?.[1]
    const credential = /credential \(shown once, keep it secret\): (\S+)/.exec(added)?.[1]
    const reader = client(s.url, 'cli-memory', credential!)
    await reader.whenSynced()
    const closed = denied(reader)
    await run('remove-member', '--org', orgId!, '--member', memberId!)
    expect(await closed).toBe(CLOSE.memberRemoved)
    expect((await run('list')).stdout).toContain(`${orgId} lists memory cli-memory`)
  }, 60_000)
})

describe('one server process and Redis SIGKILLed mid-run', () => {
  /** `cli.ts serve --redis` in its own process, on a fixed port; resolves once it listens. */
  async function serverProcess(url: string, port: number, dataDir: string): Promise<ChildProcess> {
    const child = spawn('node', ['--import', 'tsx', 'src/server/cli.ts', 'serve', '--port', String(port), '--data', dataDir, '--redis', url], { stdio: ['ignore', 'pipe', 'ignore'] })
    await new Promise<void>((resolve, reject) => {
      let out = ''
      child.stdout!.on('data', (d: Buffer) => {
        out += d.toString()
        if (out.includes('Cairn sync server on')) resolve()
      })
      child.once('exit', (code) => reject(new Error(`the server process exited (${code}) before listening`)))
    })
    return child
  }
  const kill = async (child: ChildProcess) => {
    if (child.exitCode !== null || child.signalCode !== null) return
    const exited = new Promise((r) => child.once('exit', r))
    child.kill('SIGKILL')
    await exited
  }

  it('loses no acknowledged change, and the cut state is right once Redis is back', async () => {
    const own = await startRedis()
    cleanups.push(() => own.stop())
    const q = await server(own.url, 'cairn:')
    const dataDir = mkdtempSync(join(tmpdir(), 'cairn-org-proc-'))
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }))
    const port = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const address = probe.address()
        probe.close(() => resolve(typeof address === 'object' && address ? address.port : 0))
      })
    })
    let p = await serverProcess(own.url, port, dataDir)
    cleanups.push(() => kill(p))
    const pUrl = `ws://127.0.0.1:${port}`

    const org = await q.organizations.create('Acme')
    await orgMemory(q, org, 'shared')
    const removed = await q.organizations.addMember(org.id, { kind: 'agent', name: 'removed before the crash' })
    const kept = await q.organizations.addMember(org.id, { kind: 'agent', name: 'kept' })
    const removedWhileDown = await q.organizations.addMember(org.id, { kind: 'agent', name: 'removed while the process was dead' })
    const onP = client(pUrl, 'shared', removed.credential)
    const keptOnP = client(pUrl, 'shared', kept.credential)
    const downOnP = client(pUrl, 'shared', removedWhileDown.credential)
    await Promise.all([onP.whenSynced(), keptOnP.whenSynced(), downOnP.whenSynced()])

    // members added one after another while Redis dies and comes back: which were acknowledged?
    const acknowledged: string[] = []
    let failed = 0
    let adding = true
    const adder = (async () => {
      for (let i = 0; adding; i++) {
        await q.organizations.addMember(org.id, { kind: 'agent', name: `agent ${i}` }).then((m) => acknowledged.push(m.member.id), () => failed++)
        await new Promise((r) => setTimeout(r, 5))
      }
    })()
    await waitFor('some members acknowledged', () => acknowledged.length >= 5)
    const cutOnP = denied(onP)
    await q.organizations.removeMember(org.id, removed.member.id)
    expect(await cutOnP).toBe(CLOSE.memberRemoved)
    const beforeCrash = acknowledged.length
    await own.kill()
    await kill(p)
    await new Promise((r) => setTimeout(r, 300))
    await own.start()
    // removed while the process is dead: its socket, reconnecting to the new process, is refused there
    const downCut = denied(downOnP)
    await q.organizations.removeMember(org.id, removedWhileDown.member.id)
    p = await serverProcess(own.url, port, dataDir)
    expect(await downCut).toBe(CLOSE.memberRemoved)
    await waitFor('members acknowledged after Redis is back', () => acknowledged.length >= beforeCrash + 5, 20_000)
    adding = false
    await adder

    // what Redis holds after the crash: every acknowledged member, the removal, the listing
    const conn = await connectRedis(own.url)
    cleanups.push(() => conn.close())
    const fresh = (await (await RedisOrgs.open(conn, { watch: false })).list()).find((o) => o.id === org.id)!
    const ids = new Set(fresh.members.map((m) => m.id))
    expect(acknowledged.filter((id) => !ids.has(id))).toEqual([])
    expect(fresh.members.find((m) => m.id === removed.member.id)?.removedAt).not.toBeNull()
    expect(fresh.members.find((m) => m.id === kept.member.id)?.removedAt).toBeNull()
    expect((fresh.listed ?? []).map((l) => l.memoryId)).toEqual(['shared'])
    console.info(`${acknowledged.length} members acknowledged (${beforeCrash} before the crash), ${failed} calls failed while Redis was down; all acknowledged ones in Redis after the restart`)

    // the cut holds on the restarted process and on the server that lived through it
    for (const url of [pUrl, q.url]) {
      expect(await denied(client(url, 'shared', removed.credential))).toBe(CLOSE.memberRemoved)
      const again = client(url, 'shared', kept.credential)
      await again.whenSynced(10_000)
      await waitFor('the note', () => readMemoryDoc(again.provider.doc).observations.has('shared-note'))
    }
    expect((await listing(q.url, removed.credential)).status).toBe(403)
    expect(await listing(q.url, kept.credential)).toEqual({ status: 200, ids: ['shared'] })
    // the kept member's socket on the killed process came back through its reconnect
    await waitFor('the kept member back online', () => keptOnP.status.state === 'online', 15_000)
  }, 90_000)
})
