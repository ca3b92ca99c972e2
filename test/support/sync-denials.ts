// What a sync server answers a refused device or member, for tests that check refusals: the
// close code of a socket it denies, and the organization listing a credential gets over HTTP.
import type { SyncClient } from '../../src/sync/client'

/** The close code once the server denies `c`. */
export function denied(c: SyncClient): Promise<number> {
  return new Promise((resolve) => {
    if (c.status.state === 'denied') return resolve(c.status.closed?.code ?? 0)
    const stop = c.on('status', (s) => {
      if (s.state === 'denied') {
        stop()
        resolve(s.closed?.code ?? 0)
      }
    })
  })
}

/** The organization listing `credential` gets from the server at `serverUrl` (ws:// or http://): its status and memory ids. */
export async function listing(serverUrl: string, credential: string): Promise<{ status: number; ids: string[] }> {
  const res = await fetch(`${serverUrl.replace(/^ws/, 'http')}/org/memories`, { headers: { authorization: `Bearer ${credential}` } })
  const body = (await res.json()) as { memories?: Array<{ id: string }> }
  return { status: res.status, ids: (body.memories ?? []).map((m) => m.id) }
}
