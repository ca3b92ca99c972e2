// WebSocket close codes the sync server uses. 4400-4499 mirror HTTP 4xx: y-websocket treats
// them as final and stops reconnecting, which is right when the token itself is the problem.

export const CLOSE = {
  /** The server is shutting down; the client reconnects. */
  goingAway: 1001,
  /** The path is not /<memory id>. */
  badRequest: 4400,
  /** No token, or a token the server does not know. */
  unauthorized: 4401,
  /** The token belongs to another memory. */
  forbidden: 4403,
  /** The token was revoked (at connect time, or while connected). */
  revoked: 4410,
  /** The organization member the credential belongs to was removed (at connect time, or while connected). */
  memberRemoved: 4411,
  /** The memory was made private (or moved to another organization) while an organization member had it open. */
  notVisible: 4412,
  /** The socket sent more bytes or refused updates than its budget allows; the client retries later. */
  overBudget: 4529,
  /** The connection has as many sockets open to the memory as the server allows; the client retries later. */
  tooManySockets: 4530,
  /** The socket stopped reading while the server had more than its bound queued for it; the client reconnects. */
  slowReader: 4531,
  /** The room could not be loaded; transient, so the client retries. */
  unavailable: 4500,
} as const

/** Close codes after which reconnecting with the same token cannot help. */
export function isFinalClose(code: number): boolean {
  return code >= 4400 && code < 4500
}
