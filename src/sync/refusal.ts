// The wire format of a refusal: the sync server tells a client that an update it sent was
// not applied. One WebSocket binary frame: varUint MESSAGE_REFUSAL, then a varString holding
// the JSON of a Refusal. y-protocols uses types 0-3 (sync, awareness, auth, query awareness).
import * as decoding from 'lib0/decoding'
import * as encoding from 'lib0/encoding'
import type { Tier } from '../core/types'

export const MESSAGE_REFUSAL = 100

export type RefusalCode =
  /** A `read` connection sent a change. */
  | 'read_only'
  /** A `read_write` connection changed or deleted an existing entry it may only add to. */
  | 'not_additive'
  /** The update writes a top-level type that is not part of a memory document. */
  | 'unknown_root'
  /** The update writes an entry that is not a valid observation, alias, rejection or file. */
  | 'invalid_value'
  /** The update builds on changes of this client that the server refused or never received. */
  | 'incomplete'
  /** The update could not be decoded. */
  | 'malformed'
  /** The update extends history under a Yjs client id another connection started. */
  | 'not_owner'
  /** A `read_write` connection merged two entities that consolidation would not propose on their names alone. */
  | 'unproposed_merge'
  /** The connection sent more than its budget of bytes or refused updates; it is closed for a while. */
  | 'over_budget'
  /** The update is larger than the server takes in one message; the client sends large ones in pieces. */
  | 'too_large'

export interface Refusal {
  v: 1
  code: RefusalCode
  message: string
  /** The tier of the connection that sent the update. */
  tier: Tier
  /** The keys the refused update would have changed, per map (capped). */
  keys: Record<string, string[]>
  at: string
}

const CODES: readonly RefusalCode[] = ['read_only', 'not_additive', 'unknown_root', 'invalid_value', 'incomplete', 'malformed', 'not_owner', 'unproposed_merge', 'over_budget', 'too_large']
const TIERS: readonly Tier[] = ['read', 'read_write', 'full']

export function encodeRefusal(refusal: Refusal): Uint8Array {
  const encoder = encoding.createEncoder()
  encoding.writeVarUint(encoder, MESSAGE_REFUSAL)
  encoding.writeVarString(encoder, JSON.stringify(refusal))
  return encoding.toUint8Array(encoder)
}

/** Reads the body after the message type; a frame that does not parse yields a generic refusal. */
export function readRefusal(decoder: decoding.Decoder): Refusal {
  const fallback: Refusal = { v: 1, code: 'malformed', message: 'the server refused an update', tier: 'read', keys: {}, at: new Date().toISOString() }
  try {
    const raw: unknown = JSON.parse(decoding.readVarString(decoder))
    if (typeof raw !== 'object' || raw === null) return fallback
    const r = raw as Record<string, unknown>
    const keys: Record<string, string[]> = {}
    if (typeof r.keys === 'object' && r.keys !== null) {
      for (const [map, list] of Object.entries(r.keys)) {
        if (Array.isArray(list)) keys[map] = list.filter((k): k is string => typeof k === 'string').slice(0, 100)
      }
    }
    return {
      v: 1,
      code: CODES.includes(r.code as RefusalCode) ? (r.code as RefusalCode) : 'malformed',
      message: typeof r.message === 'string' ? r.message.slice(0, 1000) : fallback.message,
      tier: TIERS.includes(r.tier as Tier) ? (r.tier as Tier) : 'read',
      keys,
      at: typeof r.at === 'string' ? r.at : fallback.at,
    }
  } catch {
    return fallback
  }
}
