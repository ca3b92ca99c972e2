// Every read of Yjs beyond its documented API that the sync layer makes, in one place: the
// structs a document holds, a decoded update's structs and delete set, writing one struct in
// the V1 format, and two constants of that format. test/sync/yjs-internals.test.ts asserts each
// shape relied on here, so a Yjs release that changes one fails that test, not a sync.
import * as encoding from 'lib0/encoding'
import * as Y from 'yjs'

/** What an update or a document's store holds: items, garbage-collected ranges, and (in updates) gaps. */
export type Struct = Y.Item | Y.GC | Y.Skip

/** A delete set as `Y.decodeUpdate` gives it: per client, the deleted clock ranges. */
export interface DecodedDeleteSet {
  clients: Map<number, Array<{ clock: number; len: number }>>
}

/** Yjs content ref of binary content (`ContentBinary`) in the V1 format. */
export const CONTENT_BINARY = 3
/** Yjs struct info of a Skip: a gap in a client's clocks that the update does not cover. */
export const SKIP_INFO = 10

/** Each client's structs in the document, in clock order (the document's own arrays: never change them). */
export function structsOf(doc: Y.Doc): Map<number, Array<Y.Item | Y.GC>> {
  return doc.store.clients as Map<number, Array<Y.Item | Y.GC>>
}

/**
 * Every client's clock in `doc`, summed. A client's clock only grows, so the sum changes
 * exactly when the document gains structs: comparing it costs no encoding of the state vector.
 */
export function clockTotal(doc: Y.Doc): number {
  let total = 0
  for (const structs of structsOf(doc).values()) {
    const last = structs[structs.length - 1]
    if (last) total += last.id.clock + last.length
  }
  return total
}

/** Whether two documents hold the same clocks for every client (equal state vectors), read without encoding either. */
export function sameClocks(a: Y.Doc, b: Y.Doc): boolean {
  const left = structsOf(a)
  const right = structsOf(b)
  if (left.size !== right.size) return false
  for (const [client, structs] of left) {
    const mine = structs[structs.length - 1]
    const theirs = right.get(client)?.at(-1)
    if (!mine || !theirs || mine.id.clock + mine.length !== theirs.id.clock + theirs.length) return false
  }
  return true
}

/** The id of the item a nested type lives in, or null for an item of a root type. */
function parentItemId(item: Y.Item): Y.ID | null {
  const parent = item.parent as { _item?: Y.Item | null } | null
  return parent?._item?.id ?? null
}

/**
 * The ids a struct needs before it can integrate: its neighbours at creation and the item its
 * parent type lives in (an id in a decoded update, the parent type's item in a document).
 */
export function dependenciesOf(struct: Struct): Y.ID[] {
  if (!(struct instanceof Y.Item)) return []
  const deps: Y.ID[] = []
  if (struct.origin) deps.push(struct.origin)
  if (struct.rightOrigin) deps.push(struct.rightOrigin)
  const parent = struct.parent instanceof Y.ID ? struct.parent : parentItemId(struct)
  if (parent) deps.push(parent)
  return deps
}

/** An update's structs and delete set, decoded. */
export function decodeUpdate(update: Uint8Array): { structs: Struct[]; ds: DecodedDeleteSet } {
  return Y.decodeUpdate(update) as unknown as { structs: Struct[]; ds: DecodedDeleteSet }
}

/** Writes one struct, whole, in the V1 format; returns the bytes it took. */
export function writeStruct(encoder: Y.UpdateEncoderV1, struct: Struct): number {
  const before = encoding.length(encoder.restEncoder)
  struct.write(encoder, 0)
  return encoding.length(encoder.restEncoder) - before
}
