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
