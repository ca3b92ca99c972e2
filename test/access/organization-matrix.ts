// The organization matrix, through real sync servers on 127.0.0.1 with real y-websocket clients:
// every cell of who (member, non-member, removed member, holder of a revoked connection) x the
// memory's visibility (private, organization) x the tier of the connection the owner made for
// that agent, on each surface (the library on the agent's own device, the sync server, an MCP
// server). Each agent holds two keys: its member credential and that connection's token. The
// credential opens an organization-visible memory with `read` for members only; the
// connection gives its tier until it is revoked; what the agent may do is the better of the two.
// Then the cuts while everything is open: removing a member, making a memory private, revoking.
// Run on one server (organization-matrix.test.ts) and on three sharing Redis (-redis.test.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb'
import { WebSocket } from 'ws'
import * as Y from 'yjs'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { createMemory, joinOrganizationMemory, listOrganizationMemories, type Memory } from '../../src/index'
import type { Tier, Visibility } from '../../src/core/types'
import { organizationMemoryProvider, syncedMemoryProvider } from '../../src/mcp/provider'
import { startHttpMcpServer, type HttpMcpServer } from '../../src/mcp/server'
import { CLOSE } from '../../src/sync/close-codes'
import { readMemoryDoc } from '../../src/sync/memory-doc'
import { putObservation } from '../helpers/doc-writes'
import { readSharedConnections } from '../../src/sync/shared-connections'
import { readVisibility, visibilityMap } from '../../src/sync/visibility'
import type { SyncClient } from '../../src/sync/client'
import type { OrgMemory } from '../../src/server/org-memories'
import type { Organization } from '../../src/server/org-registry'
import type { OrgDirectory } from '../../src/server/org-store'
import { call } from '../mcp/session'
import { observation } from '../sync/fixture'

/**
 * Where the matrix runs: one sync server, or several sharing Redis. The owner syncs and the
 * administrator acts through the owner's server, the owner's other device and MCP replica
 * through the replica's, and members (and the connections the owner made) through the member's.
 */
export interface OrgDeployment {
  ownerUrl: string
  replicaUrl: string
  memberUrl: string
  orgs: OrgDirectory & { memories(orgId: string): Promise<OrgMemory[]> }
  token(memoryId: string, tier: Tier, agent?: string): Promise<{ token: string; id: string }>
  /**
   * A y-websocket client on the member's server, or the replica's (a connection the owner made
   * in the memory: a server that does not hold the room may have read it up to 2 s ago).
   */
  client(memoryId: string, token: string, via?: 'member' | 'replica'): SyncClient
  /** The room as the owner's server holds it. */
  roomState(memoryId: string): Promise<Uint8Array | null>
  /** Stops every server and starts it again on the same storage and port. */
  restart(): Promise<void>
  cleanup(): Promise<void>
}

export function organizationMatrix(start: () => Promise<OrgDeployment>): void {
  const cleanup: Array<() => Promise<unknown>> = []
  let d: OrgDeployment
  let org: Organization
  let otherOrg: Organization

  async function until(what: string, check: () => boolean | Promise<boolean>, ms = 10_000): Promise<void> {
    const end = Date.now() + ms
    while (!(await check())) {
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
      await new Promise((r) => setTimeout(r, 20))
    }
  }

  async function roomDoc(memoryId: string): Promise<Y.Doc> {
    const doc = new Y.Doc()
    const state = await d.roomState(memoryId)
    if (state) Y.applyUpdate(doc, state)
    return doc
  }

  const note = (title: string) => ({ title, content: `${title}, by the organization matrix.`, entities: [{ name: 'Ada Lovelace', type: 'person', description: 'Mathematician who wrote the first published program' }] })
  const fresh = () => ({ indexedDB: new IDBFactory(), IDBKeyRange })

  /** A memory on the owner's device, synced with a full token, with a device replica and an MCP replica that sync with the owner's token. */
  interface Held {
    owner: Memory
    ownerToken: string
    device: Memory
    mcp: HttpMcpServer
  }

  async function holdMemory(name: string, visibility: Visibility): Promise<Held> {
    const owner = await createMemory({ name, ...fresh(), ...(visibility === 'organization' ? { visibility, orgId: org.id } : {}) })
    cleanup.push(() => owner.close())
    const ownerToken = (await d.token(owner.info.id, 'full', `owner of ${name}`)).token
    await (await owner.sync({ serverUrl: d.ownerUrl, token: ownerToken, WebSocketPolyfill: WebSocket, crossTab: false })).client!.whenSynced()
    const own = await owner.connect({ agent: 'owner', tier: 'full', localOnly: true })
    await own.write(note('Seed note'))
    await until('the seed to reach the server', async () => readMemoryDoc(await roomDoc(owner.info.id)).observations.size > 0)
    const device = await createMemory({ name, id: owner.info.id, ...fresh() })
    cleanup.push(() => device.close())
    await (await device.sync({ serverUrl: d.replicaUrl, token: ownerToken, WebSocketPolyfill: WebSocket, crossTab: false })).client!.whenSynced()
    const provider = syncedMemoryProvider({ memoryId: owner.info.id, serverUrl: d.replicaUrl, syncToken: ownerToken })
    cleanup.push(() => provider.close())
    await provider.memory()
    const mcp = await startHttpMcpServer({ provider, host: '127.0.0.1', port: 0 })
    cleanup.push(() => mcp.close())
    return { owner, ownerToken, device, mcp }
  }

  const held = {} as Record<Visibility, Held>

  beforeAll(async () => {
    d = await start()
    cleanup.push(() => d.cleanup())
    org = await d.orgs.create('Acme')
    otherOrg = await d.orgs.create('Elsewhere')
    held.private = await holdMemory('private plans', 'private')
    held.organization = await holdMemory('team handbook', 'organization')
    // created organization-visible, the memory says so in its document at its first sync
    await until('the server to list the organization memory', async () => (await d.orgs.memories(org.id)).length === 1)
    // the organization accepts it into its listing (an administrator of the server does)
    await d.orgs.accept(org.id, held.organization.owner.info.id)
  }, 90_000)

  afterAll(async () => {
    for (const f of cleanup.splice(0).reverse()) await f().catch(() => undefined)
  })

  async function mcpClient(url: string, token: string): Promise<Client> {
    const client = new Client({ name: 'org-matrix', version: '0.0.0' })
    await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }))
    cleanup.push(() => client.close())
    return client
  }

  type Who = 'member' | 'non-member' | 'removed member' | 'revoked connection'
  const WHO: Who[] = ['member', 'non-member', 'removed member', 'revoked connection']
  const VISIBILITIES: Visibility[] = ['private', 'organization']
  const TIERS: Tier[] = ['read', 'read_write', 'full']
  const RANK: Record<Tier, number> = { read: 0, read_write: 1, full: 2 }

  /** What the member credential alone opens: `read` for a current member, on an organization-visible memory only. */
  const credentialTier = (who: Who, v: Visibility): Tier | null => (who === 'member' || who === 'revoked connection') && v === 'organization' ? 'read' : null
  /** Why the server refuses the credential otherwise. */
  const credentialRefusal = (who: Who): number => (who === 'removed member' ? CLOSE.memberRemoved : CLOSE.forbidden)
  /** What the owner's connection gives: its tier, until it is revoked. */
  const connectionTier = (who: Who, tier: Tier): Tier | null => (who === 'revoked connection' ? null : tier)
  const best = (a: Tier | null, b: Tier | null): Tier | null => (a === null ? b : b === null ? a : RANK[a] >= RANK[b] ? a : b)

  describe.each(WHO)('%s', (who) => {
    let credential: string

    beforeAll(async () => {
      // a non-member belongs to another organization: a valid credential, for the wrong organization
      const made = await d.orgs.addMember(who === 'non-member' ? otherOrg.id : org.id, { kind: 'agent', name: `${who} agent` })
      credential = made.credential
      if (who === 'removed member') await d.orgs.removeMember(org.id, made.member.id)
    })

    describe.each(VISIBILITIES)('a %s memory', (visibility) => {
      const expected = credentialTier(who, visibility)

      it(`sync server: the member credential ${expected ? 'opens it read-only' : 'is refused'}`, async () => {
        const memoryId = held[visibility].owner.info.id
        const socket = d.client(memoryId, credential)
        cleanup.push(async () => socket.destroy())
        if (!expected) {
          await until('the refusal', () => socket.status.state === 'denied')
          expect(socket.status.closed?.code).toBe(credentialRefusal(who))
          return
        }
        await socket.whenSynced()
        await until('the room to arrive', () => readMemoryDoc(socket.provider.doc).observations.size > 0)
        putObservation(socket.provider.doc, observation(`member-write-${who.replace(/ /g, '-')}`))
        await until('the refusal', () => socket.status.refusals.length === 1)
        expect(socket.status.refusals[0]!.code).toBe('read_only')
        expect(readMemoryDoc(await roomDoc(memoryId)).observations.has(`member-write-${who.replace(/ /g, '-')}`)).toBe(false)
      })

      it(`library: joining with the credential ${expected ? 'gives a read connection, cached on the device' : 'is refused'}`, async () => {
        const memoryId = held[visibility].owner.info.id
        const join = joinOrganizationMemory({ serverUrl: d.memberUrl, credential, memoryId, ...fresh(), WebSocketPolyfill: WebSocket, crossTab: false, timeoutMs: 5_000 })
        if (!expected) {
          await expect(join).rejects.toMatchObject({ code: who === 'removed member' ? 'revoked' : 'not_found' })
          return
        }
        const { memory, connection } = await join
        cleanup.push(() => memory.close())
        expect(memory.info).toMatchObject({ visibility: 'organization', orgId: org.id })
        expect(connection.tier).toBe('read')
        expect((await connection.recall({ query: 'mathematician program' })).entities.map((e) => e.name)).toContain('Ada Lovelace')
        await expect(connection.write(note('A member writes'))).rejects.toMatchObject({ code: 'forbidden' })
      })

      it(`MCP server: a replica opened with the credential ${expected ? 'serves it read-only' : 'cannot start'}`, async () => {
        const provider = organizationMemoryProvider({ memoryId: held[visibility].owner.info.id, serverUrl: d.memberUrl, credential, timeoutMs: 5_000 })
        cleanup.push(() => provider.close())
        if (!expected) {
          await expect(provider.memory()).rejects.toMatchObject({ code: who === 'removed member' ? 'revoked' : 'not_found' })
          return
        }
        await provider.memory()
        const mcp = await startHttpMcpServer({ provider, host: '127.0.0.1', port: 0 })
        cleanup.push(() => mcp.close())
        const session = await mcpClient(mcp.url, credential)
        const recalled = await call(session, 'recall', { query: 'mathematician program' })
        expect(recalled.body.entities.map((e: { name: string }) => e.name)).toContain('Ada Lovelace')
        const written = await call(session, 'write', note('An MCP member writes'))
        expect(written.isError).toBe(true)
        expect(written.body.error.code).toBe('forbidden')
        // the replica serves its own credential only, not the memory's other connections
        await expect(mcpClient(mcp.url, held[visibility].ownerToken)).rejects.toThrow()
      })

      describe.each(TIERS)('with a %s connection made by the owner', (tier) => {
        let token: string
        const viaConnection = connectionTier(who, tier)
        const effective = best(expected, viaConnection)

        beforeAll(async () => {
          const { owner } = held[visibility]
          const made = await owner.connect({ agent: `${who} agent`, tier })
          token = made.token!
          if (who === 'revoked connection') await owner.revoke(made.id)
          await until('the connection to reach the server', async () => {
            const c = readSharedConnections(await roomDoc(owner.info.id)).get(made.id)
            return c !== undefined && (who !== 'revoked connection' || c.revokedAt !== null)
          })
        }, 30_000)

        it(`may do what ${effective ?? 'nothing'} allows, on the sync server`, async () => {
          const memoryId = held[visibility].owner.info.id
          const socket = d.client(memoryId, token, 'replica')
          cleanup.push(async () => socket.destroy())
          if (!viaConnection) {
            await until('the refusal', () => socket.status.state === 'denied')
            expect(socket.status.closed?.code).toBe(CLOSE.revoked)
            // what is left is the credential's, checked in the cells above
            expect(effective).toBe(expected)
            return
          }
          await socket.whenSynced()
          const slug = `conn-${who.replace(/ /g, '-')}-${visibility}-${tier.replace('_', '-')}`
          putObservation(socket.provider.doc, observation(slug))
          if (RANK[viaConnection] >= RANK.read_write) {
            await until('the write to be stored', async () => readMemoryDoc(await roomDoc(memoryId)).observations.has(slug))
            expect(socket.status.refusals).toEqual([])
          } else {
            await until('the refusal', () => socket.status.refusals.length === 1)
            expect(socket.status.refusals[0]!.code).toBe('read_only')
          }
        })

        it(`may do what ${effective ?? 'nothing'} allows, in the library on another device`, async () => {
          const { device } = held[visibility]
          if (!viaConnection) {
            await until('the revoke to reach the device', async () => device.listConnections().some((c) => c.agent === `${who} agent` && c.tier === tier && c.revokedAt !== null))
            await expect(device.connectWithToken(token)).rejects.toMatchObject({ code: 'forbidden' })
            return
          }
          await until('the connection to reach the device', async () => device.listConnections().some((c) => c.agent === `${who} agent` && c.tier === tier))
          const conn = await device.connectWithToken(token)
          expect(conn.tier).toBe(viaConnection)
          const write = conn.write(note(`Library ${who} ${tier}`))
          if (RANK[viaConnection] >= RANK.read_write) await expect(write).resolves.toMatchObject({ slug: expect.any(String) })
          else await expect(write).rejects.toMatchObject({ code: 'forbidden' })
        })

        it(`may do what ${effective ?? 'nothing'} allows, through an MCP server`, async () => {
          const { mcp } = held[visibility]
          if (!viaConnection) {
            await expect(mcpClient(mcp.url, token)).rejects.toThrow()
            return
          }
          let session: Client | undefined
          await until('the replica to hold the connection', async () => {
            session = await mcpClient(mcp.url, token).catch(() => undefined)
            return session !== undefined
          })
          const written = await call(session!, 'write', note(`MCP ${who} ${tier}`))
          expect(written.isError).toBe(RANK[viaConnection] < RANK.read_write)
        })
      })
    })
  })

  describe('listing an organization\'s memories', () => {
    it('shows members the organization-visible memories only, never private ones, and refuses others', async () => {
      const member = await d.orgs.addMember(org.id, { kind: 'device', name: 'laptop' })
      const listing = await listOrganizationMemories({ serverUrl: d.memberUrl, credential: member.credential })
      expect(listing.org).toEqual({ id: org.id, name: 'Acme' })
      expect(listing.member).toMatchObject({ id: member.member.id, kind: 'device', name: 'laptop' })
      expect(listing.memories).toEqual([{ id: held.organization.owner.info.id, name: 'team handbook', publishedBy: 'owner of team handbook' }])

      const outsider = await d.orgs.addMember(otherOrg.id, { kind: 'agent', name: 'outsider' })
      expect((await listOrganizationMemories({ serverUrl: d.memberUrl, credential: outsider.credential })).memories).toEqual([])
      await expect(listOrganizationMemories({ serverUrl: d.memberUrl, credential: 'cairn_member_unknown' })).rejects.toMatchObject({ code: 'forbidden' })
      // a connection token of the memory is not a member credential
      await expect(listOrganizationMemories({ serverUrl: d.memberUrl, credential: held.organization.ownerToken })).rejects.toMatchObject({ code: 'forbidden' })
    })
  })

  describe('who may change a memory\'s visibility on the sync server', () => {
    it('only a full connection: read_write is refused, and so is a member', async () => {
      const memoryId = held.organization.owner.info.id
      const rw = d.client(memoryId, (await d.token(memoryId, 'read_write')).token)
      cleanup.push(async () => rw.destroy())
      await rw.whenSynced()
      await until('the visibility to arrive', () => readVisibility(rw.provider.doc) !== null)
      visibilityMap(rw.provider.doc).set('memory', { visibility: 'organization', orgId: otherOrg.id, name: 'stolen' })
      await until('the refusal', () => rw.status.refusals.length === 1)
      expect(rw.status.refusals[0]!.code).toBe('not_additive')
      expect(readVisibility(await roomDoc(memoryId))).toMatchObject({ visibility: 'organization', orgId: org.id })

      const full = d.client(memoryId, (await d.token(memoryId, 'full')).token)
      cleanup.push(async () => full.destroy())
      await full.whenSynced()
      await until('the visibility to arrive', () => readVisibility(full.provider.doc) !== null)
      visibilityMap(full.provider.doc).set('memory', { visibility: 'organization', orgId: org.id, name: 'not a valid', extra: true })
      await until('the refusal', () => full.status.refusals.length === 1)
      expect(full.status.refusals[0]!.code).toBe('invalid_value')
    })
  })

  describe('cutting access while everything is open', () => {
    async function openEverywhere(memoryId: string, credential: string) {
      const socket = d.client(memoryId, credential)
      cleanup.push(async () => socket.destroy())
      await socket.whenSynced()
      const joined = await joinOrganizationMemory({ serverUrl: d.memberUrl, credential, memoryId, ...fresh(), WebSocketPolyfill: WebSocket, crossTab: false })
      cleanup.push(() => joined.memory.close())
      const provider = organizationMemoryProvider({ memoryId, serverUrl: d.memberUrl, credential })
      cleanup.push(() => provider.close())
      const mcp = await startHttpMcpServer({ provider, host: '127.0.0.1', port: 0 })
      cleanup.push(() => mcp.close())
      const session = await mcpClient(mcp.url, credential)
      expect((await call(session, 'recall', {})).isError).toBe(false)
      return { socket, joined, session, mcp, credential }
    }

    async function expectCut(open: Awaited<ReturnType<typeof openEverywhere>>, code: number) {
      await until('the socket to be closed', () => open.socket.status.state === 'denied', 5_000)
      expect(open.socket.status.closed?.code).toBe(code)
      await until('the library copy to stop its read connection', async () => {
        try {
          await open.joined.connection.recall({})
          return false
        } catch (e) {
          return (e as { code?: string }).code === 'revoked'
        }
      }, 5_000)
      await until('the MCP session to stop', async () => {
        const r = await call(open.session, 'recall', {})
        return r.isError && r.body.error.code === 'revoked'
      }, 5_000)
      // no new session either: the replica's one connection is revoked
      await expect(mcpClient(open.mcp.url, open.credential)).rejects.toThrow()
    }

    it('removing a member closes its sockets at once and refuses its credential afterwards', async () => {
      const memoryId = held.organization.owner.info.id
      const { credential, member } = await d.orgs.addMember(org.id, { kind: 'agent', name: 'leaving agent' })
      const stays = await d.orgs.addMember(org.id, { kind: 'agent', name: 'staying agent' })
      const open = await openEverywhere(memoryId, credential)
      const other = d.client(memoryId, stays.credential)
      cleanup.push(async () => other.destroy())
      await other.whenSynced()

      await d.orgs.removeMember(org.id, member.id)
      await expectCut(open, CLOSE.memberRemoved)
      const again = d.client(memoryId, credential)
      cleanup.push(async () => again.destroy())
      await until('the credential to be refused', () => again.status.state === 'denied')
      expect(again.status.closed?.code).toBe(CLOSE.memberRemoved)
      await expect(listOrganizationMemories({ serverUrl: d.memberUrl, credential })).rejects.toMatchObject({ code: 'revoked' })
      // the device keeps what it had cached, still marked as the organization's
      expect(open.joined.memory.info).toMatchObject({ visibility: 'organization', orgId: org.id })
      const offline = await open.joined.memory.connect({ agent: 'device owner', tier: 'read', localOnly: true })
      expect((await offline.recall({ query: 'mathematician program' })).entities.map((e) => e.name)).toContain('Ada Lovelace')
      // the other member is untouched
      expect(other.status.state).toBe('online')
    })

    it('making a memory private closes every member socket at once, leaves connections alone, and hides it from the listing', async () => {
      const owner = await createMemory({ name: 'soon private', ...fresh() })
      cleanup.push(() => owner.close())
      const ownerToken = (await d.token(owner.info.id, 'full', 'owner')).token
      await (await owner.sync({ serverUrl: d.ownerUrl, token: ownerToken, WebSocketPolyfill: WebSocket, crossTab: false })).client!.whenSynced()
      await (await owner.connect({ agent: 'owner', tier: 'full', localOnly: true })).write(note('Seed note'))
      const { credential } = await d.orgs.addMember(org.id, { kind: 'device', name: 'phone' })

      // private at first: the member is refused, and the memory is not listed
      const early = d.client(owner.info.id, credential)
      cleanup.push(async () => early.destroy())
      await until('the refusal', () => early.status.state === 'denied')
      expect(early.status.closed?.code).toBe(CLOSE.forbidden)

      await owner.setVisibility('organization', org.id)
      await d.orgs.accept(org.id, owner.info.id)
      await until('the listing to show it', async () => (await listOrganizationMemories({ serverUrl: d.memberUrl, credential })).memories.some((m) => m.id === owner.info.id))
      const open = await openEverywhere(owner.info.id, credential)
      const agent = await owner.connect({ agent: 'kept agent', tier: 'read' })
      await until('the connection to reach the server', async () => readSharedConnections(await roomDoc(owner.info.id)).has(agent.id))
      const connected = d.client(owner.info.id, agent.token!, 'replica')
      cleanup.push(async () => connected.destroy())
      await connected.whenSynced()

      await owner.setVisibility('private')
      await expectCut(open, CLOSE.notVisible)
      // the copies learn the memory is private (the change reached them before their socket closed)
      await until('the member copy to adopt private', () => open.joined.memory.info.visibility === 'private')
      expect(connected.status.state).toBe('online')
      expect((await listOrganizationMemories({ serverUrl: d.memberUrl, credential })).memories.some((m) => m.id === owner.info.id)).toBe(false)
      const again = d.client(owner.info.id, credential)
      cleanup.push(async () => again.destroy())
      await until('the credential to be refused', () => again.status.state === 'denied')
      expect(again.status.closed?.code).toBe(CLOSE.forbidden)
    })

    it('revoking a member\'s connection leaves it the organization\'s read access', async () => {
      const memoryId = held.organization.owner.info.id
      const { credential } = await d.orgs.addMember(org.id, { kind: 'agent', name: 'two keys' })
      const made = await held.organization.owner.connect({ agent: 'two keys', tier: 'read_write' })
      await until('the connection to reach the server', async () => readSharedConnections(await roomDoc(memoryId)).has(made.id))
      const viaConnection = d.client(memoryId, made.token!, 'replica')
      const viaCredential = d.client(memoryId, credential)
      cleanup.push(async () => viaConnection.destroy(), async () => viaCredential.destroy())
      await Promise.all([viaConnection.whenSynced(), viaCredential.whenSynced()])
      await held.organization.owner.revoke(made.id)
      await until('the connection socket to be closed', () => viaConnection.status.state === 'denied', 5_000)
      expect(viaConnection.status.closed?.code).toBe(CLOSE.revoked)
      expect(viaCredential.status.state).toBe('online')
    })

    it('a visibility change made while the room was unloaded holds when the room loads again', async () => {
      const memoryId = held.organization.owner.info.id
      const { credential } = await d.orgs.addMember(org.id, { kind: 'agent', name: 'after restart' })
      await d.restart()
      // the index was saved: the restarted server lists the memory before loading its room
      expect((await d.orgs.memories(org.id)).map((m) => m.id)).toContain(memoryId)
      const socket = d.client(memoryId, credential)
      cleanup.push(async () => socket.destroy())
      await socket.whenSynced()
      expect(readVisibility(socket.provider.doc)).toMatchObject({ visibility: 'organization', orgId: org.id })
    })
  })
}
