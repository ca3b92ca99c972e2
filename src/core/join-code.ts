// A join code carries what a second device needs to make its copy of a memory before the
// first sync: the id, the name, and the retrieval config that is fixed at creation (so both
// devices rank alike). A pairing code also holds the token of a connection made for that one
// device (the owner can revoke it like any other), so the device joins with nothing typed.
import { MemoryError } from './errors'
import { isLabel, isMemoryId } from './identifiers'
import { LABEL_CHARS } from './limits'
import type { MemoryInfo, RetrievalConfig } from './types'

export const JOIN_CODE_PREFIX = 'cairn-join:'
/** How a sync server's claim key starts (src/server/claim.ts): the app tells it from a token by this. */
export const CLAIM_KEY_PREFIX = 'cairn_claim_'
const MAX_CODE_CHARS = 2_000

export interface JoinCode {
  id: string
  name: string
  retrieval: Pick<RetrievalConfig, 'embedder' | 'weights' | 'snippetLength'>
  /** The sync server the memory was shared through, when known. */
  serverUrl?: string
  /** The token of the connection made for the joining device: present only in a pairing code. */
  token?: string
}

const TOKEN_SHAPE = /^[A-Za-z0-9_-]{16,200}$/

export function encodeJoinCode(info: Pick<MemoryInfo, 'id' | 'name' | 'retrieval'>, serverUrl?: string, token?: string): string {
  const { embedder, weights, snippetLength } = info.retrieval
  if (token !== undefined && !serverUrl) throw new MemoryError('invalid_request', 'a pairing code needs the sync server its token is for')
  if (token !== undefined && !TOKEN_SHAPE.test(token)) throw new MemoryError('invalid_request', 'a pairing code token must be 16-200 letters, digits, "-" or "_"')
  const body: JoinCode = {
    id: info.id, name: info.name, retrieval: { embedder, weights: { text: weights.text, vector: weights.vector }, snippetLength },
    ...(serverUrl ? { serverUrl } : {}), ...(token !== undefined ? { token } : {}),
  }
  return JOIN_CODE_PREFIX + toBase64Url(new TextEncoder().encode(JSON.stringify({ v: 1, ...body })))
}

export function isJoinCode(text: string): boolean {
  return text.trim().startsWith(JOIN_CODE_PREFIX)
}

/** Reads a join code; anything else is an `invalid_request` saying what is wrong. */
export function decodeJoinCode(text: string): JoinCode {
  const bad = (why: string): never => {
    throw new MemoryError('invalid_request', `this is not a usable join code: ${why}. Copy it again from the memory's sync panel on the other device.`)
  }
  const trimmed = typeof text === 'string' ? text.trim() : ''
  if (!trimmed.startsWith(JOIN_CODE_PREFIX)) bad(`it does not start with "${JOIN_CODE_PREFIX}"`)
  if (trimmed.length > MAX_CODE_CHARS) bad('it is too long')
  let raw: unknown
  try {
    raw = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(fromBase64Url(trimmed.slice(JOIN_CODE_PREFIX.length))))
  } catch {
    return bad('it is cut off or mistyped')
  }
  const o = raw as Record<string, unknown>
  if (typeof o !== 'object' || o === null || o.v !== 1) return bad('it was made by another version of Cairn')
  const r = o.retrieval as Record<string, unknown> | undefined
  const w = r?.weights as Record<string, unknown> | undefined
  if (!isMemoryId(o.id)) bad('its memory id is malformed')
  if (!isLabel(o.name)) bad('its memory name is malformed')
  if (typeof r?.embedder !== 'string' || !r.embedder || r.embedder.length > LABEL_CHARS) bad('its retrieval model is malformed')
  if (typeof w?.vector !== 'number' || typeof w.text !== 'number' || !(w.vector >= 0 && w.vector <= 1)) bad('its retrieval weights are malformed')
  if (typeof r?.snippetLength !== 'number' || !Number.isInteger(r.snippetLength)) bad('its snippet length is malformed')
  if (o.serverUrl !== undefined && (typeof o.serverUrl !== 'string' || !/^wss?:\/\/\S{1,500}$/.test(o.serverUrl))) bad('its server address is malformed')
  if (o.token !== undefined && (typeof o.token !== 'string' || !TOKEN_SHAPE.test(o.token) || o.serverUrl === undefined)) bad('its connection token is malformed')
  return {
    id: o.id as string,
    name: o.name as string,
    retrieval: { embedder: r!.embedder as string, weights: { text: w!.text as number, vector: w!.vector as number }, snippetLength: r!.snippetLength as number },
    ...(o.serverUrl ? { serverUrl: o.serverUrl as string } : {}),
    ...(o.token !== undefined ? { token: o.token as string } : {}),
  }
}

function toBase64Url(bytes: Uint8Array): string {
  let binary = ''
  for (const b of bytes) binary += String.fromCharCode(b)
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')
}

function fromBase64Url(text: string): Uint8Array {
  const binary = atob(text.replace(/-/g, '+').replace(/_/g, '/'))
  return Uint8Array.from(binary, (c) => c.charCodeAt(0))
}
