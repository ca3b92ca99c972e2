// Tells the other open instances of a memory (tabs, workers) that a connection was revoked,
// through a BroadcastChannel, so a handle open anywhere stops at once; where there is no
// BroadcastChannel this is a no-op and instances learn it from the database. A message only
// names a connection: the listener re-reads that connection from the database and honours
// the revoke only if it is stored there, so a script posting on the channel can revoke nothing.

export interface RevocationChannel {
  announce(connectionId: string): void
  close(): void
}

export function revocationChannel(memoryId: string, onRevoked: (connectionId: string) => void): RevocationChannel {
  if (typeof BroadcastChannel === 'undefined') return { announce: () => undefined, close: () => undefined }
  const channel = new BroadcastChannel(`cairn-revocations:${memoryId}`)
  channel.onmessage = (e: MessageEvent) => {
    const m = e.data as { connectionId?: unknown } | null
    if (m && typeof m.connectionId === 'string') onRevoked(m.connectionId)
  }
  // Node keeps a process alive while a channel is open; a memory's channel must not.
  ;(channel as unknown as { unref?: () => void }).unref?.()
  return {
    announce: (connectionId) => channel.postMessage({ connectionId }),
    close: () => channel.close(),
  }
}
