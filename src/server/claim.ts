// Claiming a memory on a sync server without a terminal: `POST /claim` with the server's claim
// key as the Bearer token and `{ "memoryId": ... }` issues a `full` token for a memory this
// server does not hold yet (no token of its own and no connection in a stored room). Its
// other devices then join with pairing codes made in the app, which the room's own
// connections authorize. A memory already here is refused: claiming never takes one over.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { isMemoryError } from '../core/errors'
import { CLAIM_KEY_PREFIX } from '../core/join-code'
import { Serial } from '../core/serial'
import type { TokenAdmin } from './access-source'
import { ROOM_NAME } from './file-room-store'
import type { SyncLog } from './log'

const MAX_BODY_BYTES = 1_024

/** The claim key kept in `file`, made (readable by its owner only) when the file does not exist. */
export function claimKeyIn(file: string): string {
  if (!existsSync(file)) writeFileSync(file, `${CLAIM_KEY_PREFIX}${randomBytes(24).toString('base64url')}\n`, { mode: 0o600, flag: 'wx' })
  const key = readFileSync(file, 'utf8').trim()
  if (!key.startsWith(CLAIM_KEY_PREFIX) || key.length < CLAIM_KEY_PREFIX.length + 16) throw new Error(`${file} holds no claim key; delete it to make a new one`)
  return key
}

export interface ClaimDeps {
  claimKey: string
  tokens: Pick<TokenAdmin, 'add' | 'list'>
  /** Whether the memory's room holds any connection of its own (it is on this server already). */
  roomHasConnections(memoryId: string): Promise<boolean>
  log: SyncLog
}

const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest()

export function claimHandler(deps: ClaimDeps): (req: IncomingMessage, res: ServerResponse) => void {
  const keyHash = digest(deps.claimKey)
  // one claim at a time, so two devices racing for one memory id cannot both get it
  const claims = new Serial()
  // open to any origin like the organization listing: the key travels in a header, never a cookie
  const headers = { 'content-type': 'application/json', 'access-control-allow-origin': '*', 'access-control-allow-headers': 'authorization, content-type', 'access-control-allow-methods': 'POST, OPTIONS', 'cache-control': 'no-store' }
  return (req, res) => {
    const reply = (status: number, body: unknown) => void res.writeHead(status, headers).end(JSON.stringify(body))
    if (req.method === 'OPTIONS') return void res.writeHead(204, headers).end()
    if (req.method !== 'POST') return reply(405, { code: 'invalid_request', message: 'use POST' })
    const presented = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '')?.[1] ?? ''
    if (!timingSafeEqual(digest(presented), keyHash)) return reply(401, { code: 'unauthorized', message: 'send this server\'s claim key as the Bearer token (npm start prints it)' })
    let body = ''
    let tooLarge = false
    req.setEncoding('utf8')
    req.on('data', (chunk: string) => {
      body += chunk
      if (body.length > MAX_BODY_BYTES) tooLarge = true
    })
    req.on('end', () => {
      if (tooLarge) return reply(413, { code: 'too_large', message: `a claim is at most ${MAX_BODY_BYTES} bytes` })
      let memoryId: unknown
      let agent: unknown
      try {
        ;({ memoryId, agent } = JSON.parse(body) as { memoryId?: unknown; agent?: unknown })
      } catch {
        return reply(400, { code: 'invalid_request', message: 'send {"memoryId": "..."} as JSON' })
      }
      void claims.run(async () => {
        // checked before the room is looked up: the id names a file
        if (typeof memoryId !== 'string' || !ROOM_NAME.test(memoryId)) return reply(400, { code: 'invalid_request', message: 'memoryId must be 1-128 letters, digits, "-" or "_"' })
        if ((await deps.tokens.list(memoryId)).length > 0 || (await deps.roomHasConnections(memoryId))) {
          return reply(409, { code: 'already_claimed', message: 'this memory is already on this server: join it from a device that has it ("Open on another device")' })
        }
        const { token, connection } = await deps.tokens.add({ memoryId, tier: 'full', agent: typeof agent === 'string' && agent.trim() ? agent : 'owner (claimed)' })
        deps.log('info', 'memory_claimed', { room: memoryId, connection: connection.id })
        reply(201, { token, connectionId: connection.id })
      }).catch((err: unknown) => {
        if (isMemoryError(err)) return reply(400, { code: err.code, message: err.message })
        deps.log('error', 'claim_failed', { error: (err as Error).message })
        reply(500, { code: 'storage_failed', message: 'the claim could not be stored; try again' })
      })
    })
  }
}
