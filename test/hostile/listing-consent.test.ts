// Anyone who owns a memory on the server could publish it into any organization's listing:
// the server checked the shape of `visibility`, never that the organization wanted it, and
// organization ids are known to every member and ex-member. A stranger's "Acme Handbook"
// appeared beside the real one. The promise: a memory joins an organization's listing, and its
// members may open it, only once the organization accepted it; taken out, members lose it.
// A listing names who published each memory.
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { CLOSE } from '../../src/sync/close-codes'
import { putObservation } from '../helpers/doc-writes'
import { writeVisibility } from '../../src/sync/visibility'
import { startHarness, type Harness } from '../server/harness'
import { observation, waitFor } from '../sync/fixture'

let h: Harness
beforeEach(async () => {
  h = await startHarness()
})
afterEach(async () => {
  await h.cleanup()
})

/** Lists what a member sees, through the server's HTTP listing. */
async function listing(credential: string): Promise<string[]> {
  const res = await fetch(`${h.server.url.replace(/^ws/, 'http')}/org/memories`, { headers: { authorization: `Bearer ${credential}` } })
  const body = (await res.json()) as { memories: Array<{ id: string; name: string }> }
  return body.memories.map((m) => m.name).sort()
}

/** A memory whose owner names `orgId` in its visibility, as any owner may. */
async function publish(memoryId: string, name: string, orgId: string) {
  const owner = h.client(memoryId, h.token(memoryId, 'full', `owner of ${name}`).token)
  await owner.whenSynced()
  putObservation(owner.provider.doc, observation(`${memoryId}-note`, { content: `from ${name}` }))
  writeVisibility(owner.provider.doc, { visibility: 'organization', orgId, name })
  await waitFor('the server to index it', () => h.server.orgs.memories(orgId).some((m) => m.id === memoryId))
  return owner
}

describe('an organization listing', () => {
  it('holds only the memories the organization accepted; a stranger\'s is neither listed nor opened', async () => {
    const org = h.server.orgs.create('Acme')
    const { credential } = h.server.orgs.addMember(org.id, { kind: 'device', name: 'laptop' })
    await publish('acme-handbook', 'Acme Handbook', org.id)
    h.server.orgs.accept(org.id, 'acme-handbook')
    await publish('stranger-handbook', 'Acme Handbook (official)', org.id)

    expect(await listing(credential)).toEqual(['Acme Handbook'])
    // the server's view names who made each one visible to the organization
    expect(h.server.orgs.memories(org.id).map((m) => [m.name, m.publishedBy])).toEqual([['Acme Handbook', 'owner of Acme Handbook'], ['Acme Handbook (official)', 'owner of Acme Handbook (official)']])
    const intruder = h.client('stranger-handbook', credential)
    await waitFor('the refusal', () => intruder.status.state === 'denied')
    expect(intruder.status.closed?.code).toBe(CLOSE.forbidden)
    const real = h.client('acme-handbook', credential)
    await real.whenSynced()
  })

  it('takes a memory out: members no longer list it, and their open sockets close', async () => {
    const org = h.server.orgs.create('Acme')
    const { credential } = h.server.orgs.addMember(org.id, { kind: 'agent', name: 'reader' })
    await publish('acme-notes', 'Acme Notes', org.id)
    h.server.orgs.accept(org.id, 'acme-notes')
    const member = h.client('acme-notes', credential)
    await member.whenSynced()
    h.server.orgs.unlist(org.id, 'acme-notes')
    await waitFor('the member socket closed', () => member.status.state === 'denied')
    expect(member.status.closed?.code).toBe(CLOSE.notVisible)
    expect(await listing(credential)).toEqual([])
  })
})

/** POST /org/memories: a member publishes a memory it owns, proving it with a token of that memory. */
async function publishAsMember(credential: string, body: unknown): Promise<{ status: number; body: { code?: string; listed?: { memoryId: string; acceptedBy?: string } } }> {
  const res = await fetch(`${h.server.url.replace(/^ws/, 'http')}/org/memories`, {
    method: 'POST',
    headers: { authorization: `Bearer ${credential}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  return { status: res.status, body: (await res.json()) as { code?: string } }
}

describe('a member with the right to publish', () => {
  it('puts a memory it owns into the listing without an administrator; members then list and open it', async () => {
    const org = h.server.orgs.create('Acme')
    const publisher = h.server.orgs.addMember(org.id, { kind: 'device', name: 'owner laptop', mayPublish: true })
    const reader = h.server.orgs.addMember(org.id, { kind: 'agent', name: 'reader' })
    const ownerToken = h.token('acme-playbook', 'full', 'owner of Acme Playbook').token
    await publish('acme-playbook', 'Acme Playbook', org.id)
    expect(await listing(reader.credential)).toEqual([])

    const r = await publishAsMember(publisher.credential, { memoryId: 'acme-playbook', token: ownerToken })
    expect(r.status).toBe(200)
    expect(r.body.listed).toMatchObject({ memoryId: 'acme-playbook', acceptedBy: publisher.member.id })
    expect(h.server.orgs.list().find((o) => o.id === org.id)?.listed?.map((l) => [l.memoryId, l.acceptedBy])).toEqual([['acme-playbook', publisher.member.id]])
    expect(await listing(reader.credential)).toEqual(['Acme Playbook'])
    const member = h.client('acme-playbook', reader.credential)
    await member.whenSynced()
  })

  it('is refused without the right, without owning the memory, or for a memory not visible to the organization', async () => {
    const org = h.server.orgs.create('Acme')
    const plain = h.server.orgs.addMember(org.id, { kind: 'agent', name: 'plain member' })
    const publisher = h.server.orgs.addMember(org.id, { kind: 'device', name: 'publisher', mayPublish: true })
    await publish('stranger-notes', 'Stranger Notes', org.id)
    const strangerFull = h.token('stranger-notes', 'full', 'stranger').token
    const writer = h.token('stranger-notes', 'read_write', 'a writer').token
    const privateFull = h.token('private-notes', 'full', 'owner of private').token
    const priv = h.client('private-notes', privateFull)
    await priv.whenSynced()
    putObservation(priv.provider.doc, observation('private-note'))

    // a member without the right, even holding the memory's full token
    expect(await publishAsMember(plain.credential, { memoryId: 'stranger-notes', token: strangerFull })).toMatchObject({ status: 403, body: { code: 'forbidden' } })
    // the right to publish, but no proof of owning the memory: a read_write token, another memory's, the member credential itself
    expect(await publishAsMember(publisher.credential, { memoryId: 'stranger-notes', token: writer })).toMatchObject({ status: 403, body: { code: 'not_owner' } })
    expect(await publishAsMember(publisher.credential, { memoryId: 'stranger-notes', token: privateFull })).toMatchObject({ status: 403, body: { code: 'not_owner' } })
    h.server.orgs.accept(org.id, 'stranger-notes')
    expect(await publishAsMember(publisher.credential, { memoryId: 'stranger-notes', token: publisher.credential })).toMatchObject({ status: 403, body: { code: 'not_owner' } })
    h.server.orgs.unlist(org.id, 'stranger-notes')
    // owned, but the owner keeps it private
    expect(await publishAsMember(publisher.credential, { memoryId: 'private-notes', token: privateFull })).toMatchObject({ status: 409, body: { code: 'not_visible' } })
    // a malformed body
    expect(await publishAsMember(publisher.credential, { memoryId: '../x', token: privateFull })).toMatchObject({ status: 400 })
    expect(h.server.orgs.list().find((o) => o.id === org.id)?.listed ?? []).toEqual([])
    expect(await listing(plain.credential)).toEqual([])
  })
})
