// What a hostile peer builds: raw Yjs updates the ordinary API never makes, sent through a
// real y-websocket client by applying them to that client's document.
import * as encoding from 'lib0/encoding'
import * as syncProtocol from 'y-protocols/sync'
import * as Y from 'yjs'
import type { SyncClient } from '../../src/sync/client'
import { readMemoryDoc } from '../../src/sync/memory-doc'
import { waitFor } from '../sync/fixture'

/** An update holding one GC range of `client`: clocks [clock, clock + length) with no content. */
export function gcRange(client: number, clock: number, length: number): Uint8Array {
  const enc = new Y.UpdateEncoderV1()
  encoding.writeVarUint(enc.restEncoder, 1)
  encoding.writeVarUint(enc.restEncoder, 1)
  enc.writeClient(client)
  encoding.writeVarUint(enc.restEncoder, clock)
  enc.writeInfo(0)
  enc.writeLen(length)
  encoding.writeVarUint(enc.restEncoder, 0)
  return enc.toUint8Array()
}

/** The update a document that calls itself `client` makes by `edit`, on top of `base`. */
export function asClient(base: Y.Doc, client: number, edit: (doc: Y.Doc) => void): Uint8Array {
  const doc = new Y.Doc({ gc: true })
  Y.applyUpdate(doc, Y.encodeStateAsUpdate(base))
  // set after loading: Yjs picks a new id when history under its own id arrives from elsewhere
  doc.clientID = client
  const before = Y.encodeStateVector(doc)
  edit(doc)
  return Y.encodeStateAsUpdate(doc, before)
}

/** Sends `update` as the attacker's client would: its provider relays what its document takes in. */
export function send(attacker: SyncClient, update: Uint8Array): void {
  Y.applyUpdate(attacker.provider.doc, update, 'attack')
}

/** Sends `update` over the attacker's socket as it is, for bytes its own document could not even decode. */
export function sendRaw(attacker: SyncClient, update: Uint8Array): void {
  const e = encoding.createEncoder()
  encoding.writeVarUint(e, 0)
  syncProtocol.writeUpdate(e, update)
  // the client's socket class sends a large update in pieces; an attacker's goes whole, through
  // the WebSocket class at the root of the classes the client's socket is made of
  const ws = attacker.provider.ws!
  let whole: { send(data: Uint8Array): void } | undefined
  for (let proto = Object.getPrototypeOf(ws); proto && proto !== Object.prototype; proto = Object.getPrototypeOf(proto)) {
    if (Object.prototype.hasOwnProperty.call(proto, 'send')) whole = proto
  }
  whole!.send.call(ws, encoding.toUint8Array(e))
}

/** Waits for the next refusal the attacker gets; returns its code. */
export async function refusedAs(attacker: SyncClient, count: number): Promise<string> {
  await waitFor('a refusal', () => attacker.status.refusals.length >= count, 5_000)
  return attacker.status.refusals[count - 1]!.code
}

export function slugs(doc: Y.Doc): string[] {
  return [...readMemoryDoc(doc).observations.keys()].sort()
}
