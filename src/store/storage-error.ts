// IndexedDB failures as errors a person can act on; the transaction has already rolled back.
import { MemoryError } from '../core/errors'

export function storageError(err: unknown): MemoryError {
  if (err instanceof MemoryError) return err
  const name = (err as { name?: string; inner?: { name?: string } })?.inner?.name ?? (err as { name?: string })?.name
  if (name === 'QuotaExceededError') {
    return new MemoryError('storage_failed', 'the browser refused to store more data (storage quota exceeded); nothing was written. Free space or export and remove old memories.', { reason: 'quota' })
  }
  return new MemoryError('storage_failed', `the write could not be stored and was rolled back: ${(err as Error)?.message ?? String(err)}`, { reason: name ?? 'unknown' })
}


/** Runs a storage step; whatever IndexedDB throws comes out as a `storage_failed` MemoryError. */
export async function stored<T>(step: () => Promise<T>): Promise<T> {
  try {
    return await step()
  } catch (err) {
    throw storageError(err)
  }
}
