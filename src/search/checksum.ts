// sha256 of model assets through WebCrypto (browsers, workers and Node 20 alike).

import { MemoryError } from '../core/errors'

export async function sha256Hex(bytes: Uint8Array): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', bytes as Uint8Array<ArrayBuffer>)
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, '0')).join('')
}

/** Returns the hex digest, or throws `model_failed` when it differs from `expected`. */
export async function verifySha256(bytes: Uint8Array, expected: string | undefined, what: string): Promise<string> {
  const actual = await sha256Hex(bytes)
  if (expected !== undefined && actual !== expected.toLowerCase()) {
    throw new MemoryError(
      'model_failed',
      `The ${what} does not match its checksum (expected sha256 ${expected}, got ${actual}); the download is corrupt or the file was replaced. Clear the model cache or reinstall the model files.`,
      { what, expected, actual },
    )
  }
  return actual
}
