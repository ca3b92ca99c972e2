// How large one synced update may be, and how a device keeps to it. The sync server judges and
// applies each update in one turn of its event loop, so the size of one update bounds how long
// any other device waits for it. A device splits a large update (its first upload of a big
// memory, an import) into pieces that each integrate on their own, in an order where every
// piece only builds on earlier pieces or on what the receiver already holds.
import * as encoding from 'lib0/encoding'
import * as decoding from 'lib0/decoding'
import * as Y from 'yjs'

import { CONTENT_BINARY, decodeUpdate, dependenciesOf, SKIP_INFO, writeStruct, type DecodedDeleteSet, type Struct } from './yjs-internals'
import { MAX_FILE_BYTES } from '../core/limits'

/**
 * The largest update a sync server takes in one message, unless it is one entry or one file's
 * bytes alone. Judging and applying a piece costs the server's loop time in proportion to its
 * size; pieces this small keep each turn to a few milliseconds, well inside the loop's 50 ms goal.
 */
export const MAX_UPDATE_BYTES = 32 * 1024

/** One file's bytes travel in an update of their own: the file limit and room for its key. */
export const MAX_FILE_UPDATE_BYTES = MAX_FILE_BYTES + 64 * 1024

/** One struct that is not a file's bytes (the largest valid observation with multi-byte text) may be this large. */
export const MAX_STRUCT_UPDATE_BYTES = 1024 * 1024


/**
 * The content ref of the only struct of a V1 update, or null when it holds more or fewer.
 * Read from the update's first bytes, so it costs nothing whatever the update's size.
 */
export function singleStructContent(update: Uint8Array): number | null {
  try {
    const d = decoding.createDecoder(update)
    if (decoding.readVarUint(d) !== 1) return null
    if (decoding.readVarUint(d) !== 1) return null
    decoding.readVarUint(d) // client
    decoding.readVarUint(d) // clock
    return decoding.readUint8(d) & 0b11111
  } catch {
    return null
  }
}

export interface UpdateLimits {
  /** Any update up to this size. */
  maxBytes: number
  /** An update of a single struct up to this size. */
  maxStructBytes: number
  /** An update of a single struct of binary content (a file's bytes) up to this size. */
  maxFileBytes: number
}

export const UPDATE_LIMITS: UpdateLimits = { maxBytes: MAX_UPDATE_BYTES, maxStructBytes: MAX_STRUCT_UPDATE_BYTES, maxFileBytes: MAX_FILE_UPDATE_BYTES }

/** Whether a server with these limits takes `update` in one message (sizes only; the content is judged apart). */
export function fitsOneMessage(update: Uint8Array, limits: UpdateLimits = UPDATE_LIMITS): boolean {
  if (update.byteLength <= limits.maxBytes) return true
  if (update.byteLength > Math.max(limits.maxStructBytes, limits.maxFileBytes)) return false
  const ref = singleStructContent(update)
  if (ref === null) return false
  return update.byteLength <= (ref === CONTENT_BINARY ? limits.maxFileBytes : limits.maxStructBytes)
}

/** Each struct's bytes: in the V1 format a struct's encoding does not depend on what precedes it. */
function encodeStructs(structs: Struct[]): Map<Struct, Uint8Array> {
  const e = new Y.UpdateEncoderV1()
  const spans: Array<[number, number]> = []
  let at = 0
  for (const s of structs) {
    const length = writeStruct(e, s)
    spans.push([at, at + length])
    at += length
  }
  const all = e.toUint8Array()
  return new Map(structs.map((s, i) => [s, all.subarray(spans[i]![0], spans[i]![1])]))
}

/** One update of the given structs (each client's in clock order, with their bytes) and the delete set. */
function encodePiece(groups: Map<number, Array<{ struct: Struct; bytes: Uint8Array }>>, deleteSet: Uint8Array): Uint8Array {
  const e = encoding.createEncoder()
  encoding.writeVarUint(e, groups.size)
  for (const [client, structs] of groups) {
    let gaps = 0
    for (let i = 1; i < structs.length; i++) if (structs[i]!.struct.id.clock !== structs[i - 1]!.struct.id.clock + structs[i - 1]!.struct.length) gaps++
    encoding.writeVarUint(e, structs.length + gaps)
    encoding.writeVarUint(e, client)
    let clock = structs[0]!.struct.id.clock
    encoding.writeVarUint(e, clock)
    for (const { struct, bytes } of structs) {
      if (struct.id.clock !== clock) {
        // a merged update may leave gaps; the reader counts clocks, so a gap is written as a skip
        encoding.writeUint8(e, SKIP_INFO)
        encoding.writeVarUint(e, struct.id.clock - clock)
      }
      encoding.writeUint8Array(e, bytes)
      clock = struct.id.clock + struct.length
    }
  }
  encoding.writeUint8Array(e, deleteSet)
  return encoding.toUint8Array(e)
}

/** The V1 encoding of a delete set. */
function encodeDeleteSet(ds: DecodedDeleteSet): Uint8Array {
  return encoding.encode((e) => {
    encoding.writeVarUint(e, ds.clients.size)
    for (const [client, ranges] of ds.clients) {
      encoding.writeVarUint(e, client)
      encoding.writeVarUint(e, ranges.length)
      for (const r of ranges) {
        encoding.writeVarUint(e, r.clock)
        encoding.writeVarUint(e, r.len)
      }
    }
  })
}

const EMPTY_DELETE_SET = new Uint8Array([0])

/**
 * Splits a V1 update into updates of at most `maxBytes` each (a single struct larger than that,
 * such as a file's bytes, goes alone). Structs go out in dependency order: a piece never refers
 * to a struct of a later piece, so each piece integrates on arrival. Deletions go last, once
 * every struct they may delete has gone. An update that fits is returned as it is.
 */
export function splitUpdate(update: Uint8Array, maxBytes = MAX_UPDATE_BYTES): Uint8Array[] {
  // one struct cannot be split (and has no deletions to send after it)
  if (update.byteLength <= maxBytes || singleStructContent(update) !== null) return [update]
  const { structs, ds } = decodeUpdate(update)
  const full = new Map<number, number>()
  for (const s of structs) full.set(s.id.client, Math.max(full.get(s.id.client) ?? 0, s.id.clock + s.length))
  const deleteSet = ds.clients.size ? encodeDeleteSet(ds) : EMPTY_DELETE_SET
  const encoded = encodeStructs(structs)

  const byClient = new Map<number, Struct[]>()
  for (const s of structs) {
    const list = byClient.get(s.id.client)
    if (list) list.push(s)
    else byClient.set(s.id.client, [s])
  }
  for (const list of byClient.values()) list.sort((a, b) => a.id.clock - b.id.clock)
  const first = new Map<number, number>()
  for (const [client, list] of byClient) first.set(client, list[0]!.id.clock)
  /** Per client: the clock up to which its structs have been placed in a piece. */
  const sent = new Map(first)
  const next = new Map<number, number>([...byClient.keys()].map((c) => [c, 0]))
  const ready = (id: Y.ID): boolean => {
    const start = first.get(id.client)
    // outside this update: the receiver has it already or it comes from elsewhere
    if (start === undefined || id.clock < start || id.clock >= full.get(id.client)!) return true
    return id.clock < sent.get(id.client)!
  }

  const pieces: Uint8Array[] = []
  let groups = new Map<number, Array<{ struct: Struct; bytes: Uint8Array }>>()
  let size = 2
  const flush = () => {
    if (!groups.size) return
    pieces.push(encodePiece(groups, EMPTY_DELETE_SET))
    groups = new Map()
    size = 2
  }
  let left = structs.length
  while (left > 0) {
    let progressed = false
    for (const [client, list] of byClient) {
      let i = next.get(client)!
      while (i < list.length && dependenciesOf(list[i]!).every(ready)) {
        const s = list[i]!
        const bytes = encoded.get(s)!
        // 16: a client's header in a piece (struct count, client id, first clock)
        if (groups.size && size + bytes.byteLength + (groups.has(client) ? 0 : 16) > maxBytes) flush()
        const group = groups.get(client)
        if (group) group.push({ struct: s, bytes })
        else {
          groups.set(client, [{ struct: s, bytes }])
          size += 16
        }
        size += bytes.byteLength + 2
        sent.set(client, s.id.clock + s.length)
        i++
        left--
        progressed = true
      }
      next.set(client, i)
    }
    // A struct that waits on one that never comes: not an update Yjs makes; send it whole.
    if (!progressed) return [update]
  }
  // The deletions ride with the last piece when they fit, else alone.
  if (deleteSet !== EMPTY_DELETE_SET && size + deleteSet.byteLength > maxBytes) flush()
  if (groups.size || deleteSet !== EMPTY_DELETE_SET) pieces.push(encodePiece(groups, deleteSet))
  return pieces
}
