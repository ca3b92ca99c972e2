// One error type for every failure a caller can act on; `code` is stable, the message may improve.

export type ErrorCode =
  | 'invalid_write'
  | 'invalid_request'
  | 'forbidden'
  | 'not_found'
  | 'conflict'
  | 'config_locked'
  | 'too_large'
  | 'revoked'
  | 'storage_failed'
  | 'model_failed'
  /** An export would write a file outside the folder it was given. */
  | 'unsafe_path'

export class MemoryError extends Error {
  readonly code: ErrorCode
  readonly details: Record<string, unknown>

  constructor(code: ErrorCode, message: string, details: Record<string, unknown> = {}) {
    super(message)
    this.name = 'MemoryError'
    this.code = code
    this.details = details
  }

  toJSON(): { name: string; code: ErrorCode; message: string; details: Record<string, unknown> } {
    return { name: this.name, code: this.code, message: this.message, details: this.details }
  }
}

export function isMemoryError(value: unknown): value is MemoryError {
  return value instanceof MemoryError || (typeof value === 'object' && value !== null && (value as { name?: unknown }).name === 'MemoryError' && typeof (value as { code?: unknown }).code === 'string')
}
