// Keeps a memory's connections and its sync document in step: connections made or revoked
// here go into the document (hashes only), and those another holder of the memory made or
// revoked come into this memory's own list. So a token made on one device works on every
// device, on the sync server and in an MCP replica, and a revoke anywhere holds everywhere.
import type * as Y from 'yjs'
import { Serial } from '../core/serial'
import type { ConnectionRecord } from '../core/types'
import { readSharedConnections, shareConnections, sharedConnectionsMap, type SharedConnection } from '../sync/shared-connections'

/** The origin of this memory's own writes to the document's connections, so their echo is skipped. */
const SHARING_ORIGIN = Symbol('cairn-connections')

export interface ConnectionSharing {
  /** Writes connections made or revoked here into the document. */
  share(connections: ConnectionRecord[]): void
  /** Settles once every connection seen in the document so far is in the memory's list. */
  settled(): Promise<void>
  stop(): void
}

export interface SharingHost {
  memoryId: string
  /** The memory's connections as it holds them now. */
  known(): Iterable<ConnectionRecord>
  /** Stores and adopts connections (new, or newly revoked) another holder shared. */
  takeIn(connections: ConnectionRecord[]): Promise<void>
}

export function shareConnectionsThrough(doc: Y.Doc, host: SharingHost): ConnectionSharing {
  const steps = new Serial()
  const takeInFrom = (found: Iterable<SharedConnection>) => {
    const known = new Map([...host.known()].map((c) => [c.id, c]))
    const fresh: ConnectionRecord[] = []
    for (const c of found) {
      const mine = known.get(c.id)
      if (!mine || (c.revokedAt !== null && mine.revokedAt === null)) fresh.push({ ...c, memoryId: host.memoryId })
    }
    // a storage failure leaves them out until the next bind reads the document again
    if (fresh.length) void steps.run(() => host.takeIn(fresh)).catch(() => undefined)
  }
  const shareable = (list: Iterable<ConnectionRecord>) => [...list].filter((c) => !c.localOnly)

  takeInFrom(readSharedConnections(doc).values())
  shareConnections(doc, shareable(host.known()), SHARING_ORIGIN)

  const map = sharedConnectionsMap(doc)
  const observer = (event: Y.YMapEvent<unknown>, tr: Y.Transaction) => {
    if (tr.origin === SHARING_ORIGIN) return
    const all = readSharedConnections(doc)
    takeInFrom([...event.keysChanged].map((k) => all.get(k)).filter((c): c is SharedConnection => c !== undefined))
  }
  map.observe(observer)
  return {
    share: (list) => void shareConnections(doc, shareable(list), SHARING_ORIGIN),
    settled: () => steps.drained(),
    stop: () => map.unobserve(observer),
  }
}
