// Keeps the copies of one memory document in the tabs (workers) of one browser profile in
// step through a BroadcastChannel, with or without a sync server. A tab that joins announces
// its state vector; each tab that hears it answers with what the newcomer lacks and its own
// vector, so both sides end up with the union. After that every update is broadcast.
import * as Y from 'yjs'

type TabMessage =
  | { kind: 'hello'; from: string; stateVector: Uint8Array }
  | { kind: 'welcome'; from: string; to: string; update: Uint8Array; stateVector: Uint8Array }
  | { kind: 'missing'; from: string; to: string; update: Uint8Array }
  | { kind: 'update'; from: string; update: Uint8Array }

/** The origin of updates that came from another tab, so they are not broadcast back. */
export const TAB_ORIGIN = Symbol('cairn-tab')

export interface TabChannel {
  stop(): void
}

export function channelName(memoryId: string): string {
  return `cairn-memory-doc:${memoryId}`
}

export function joinTabChannel(memoryId: string, doc: Y.Doc): TabChannel | null {
  if (typeof BroadcastChannel === 'undefined') return null
  const channel = new BroadcastChannel(channelName(memoryId))
  const me = `${doc.clientID}-${Math.random().toString(36).slice(2, 8)}`
  const post = (m: TabMessage) => channel.postMessage(m)
  const apply = (update: Uint8Array) => Y.applyUpdate(doc, update, TAB_ORIGIN)

  channel.onmessage = (event: MessageEvent<TabMessage>) => {
    const m = event.data
    if (!m || typeof m !== 'object' || m.from === me) return
    try {
      if (m.kind === 'hello') {
        post({ kind: 'welcome', from: me, to: m.from, update: Y.encodeStateAsUpdate(doc, m.stateVector), stateVector: Y.encodeStateVector(doc) })
      } else if (m.kind === 'welcome' && m.to === me) {
        apply(m.update)
        post({ kind: 'missing', from: me, to: m.from, update: Y.encodeStateAsUpdate(doc, m.stateVector) })
      } else if (m.kind === 'missing' && m.to === me) {
        apply(m.update)
      } else if (m.kind === 'update') {
        apply(m.update)
      }
    } catch {
      // a malformed message from another tab changes nothing here
    }
  }
  const onUpdate = (update: Uint8Array, origin: unknown) => {
    if (origin !== TAB_ORIGIN) post({ kind: 'update', from: me, update })
  }
  doc.on('update', onUpdate)
  post({ kind: 'hello', from: me, stateVector: Y.encodeStateVector(doc) })
  return {
    stop() {
      doc.off('update', onUpdate)
      channel.close()
    },
  }
}
