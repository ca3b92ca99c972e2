// Claiming a memory on a sync server from the app: the claim key issues a full token for a
// memory the server does not hold, and never for one it holds (by a token or its own connections).
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { TOKENS_FILE } from '../../src/server/token-registry'
import { shareConnections } from '../../src/sync/shared-connections'
import { createMemoryDoc } from '../../src/sync/memory-doc'
import { startHarness, type Harness } from './harness'

const KEY = 'cairn_claim_' + 'k'.repeat(32)
let h: Harness | undefined
afterEach(async () => {
  await h?.cleanup()
  h = undefined
})

async function claim(harness: Harness, body: unknown, key = KEY): Promise<{ status: number; body: { token?: string; code?: string } }> {
  const res = await fetch(harness.server.url.replace(/^ws/, 'http') + '/claim', {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  return { status: res.status, body: (await res.json().catch(() => ({}))) as { token?: string; code?: string } }
}

describe('claiming a memory', () => {
  it('issues a full token for a memory the server does not hold, once; the token opens its room', async () => {
    h = await startHarness({ claimKey: KEY })
    const first = await claim(h, { memoryId: 'mem-new' })
    expect(first.status).toBe(201)
    expect(h.server.tokens.list('mem-new').map((c) => c.tier)).toEqual(['full'])
    const client = h.client('mem-new', first.body.token!)
    await client.whenSynced()
    expect(client.status.state).toBe('online')

    // the memory is here now: a second claim (another person with the key) is refused
    const again = await claim(h, { memoryId: 'mem-new' })
    expect([again.status, again.body.code]).toEqual([409, 'already_claimed'])
    expect(h.server.tokens.list('mem-new')).toHaveLength(1)
  })

  it('refuses a wrong key, a malformed id, and a memory that has a server token', async () => {
    h = await startHarness({ claimKey: KEY })
    expect((await claim(h, { memoryId: 'mem-a' }, 'cairn_claim_wrong')).status).toBe(401)
    expect((await claim(h, { memoryId: '../../etc' })).status).toBe(400)
    h.token('mem-held', 'read')
    expect((await claim(h, { memoryId: 'mem-held' })).status).toBe(409)
    expect(h.server.tokens.list()).toHaveLength(1)
  })

  it('refuses a memory whose stored room holds connections of its own, even with the token file gone', async () => {
    h = await startHarness({ claimKey: KEY })
    const doc = createMemoryDoc()
    shareConnections(doc, [{ id: 'conn-app', agent: 'laptop', tier: 'full', tokenHash: 'a'.repeat(64), createdAt: new Date().toISOString(), revokedAt: null }])
    const client = h.client('mem-kept', h.token('mem-kept', 'full').token, doc)
    await client.whenSynced()
    await expect.poll(async () => (await h!.server.roomState('mem-kept'))?.length ?? 0).toBeGreaterThan(100)
    client.destroy()
    rmSync(join(h.dataDir, TOKENS_FILE))
    await h.restart()
    expect(h.server.tokens.list('mem-kept')).toEqual([])
    expect((await claim(h, { memoryId: 'mem-kept' })).status).toBe(409)
  })

  it('is not offered by a server started without a claim key', async () => {
    h = await startHarness()
    expect((await claim(h, { memoryId: 'mem-a' })).status).toBe(426)
  })
})
