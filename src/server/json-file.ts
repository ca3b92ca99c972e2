// The sync server's small registries (connection tokens, organizations) are JSON files that
// the CLI and running servers change concurrently: every change re-reads the file under an
// exclusive lock file and replaces it atomically (its own temporary name, fsync, rename).
import { randomBytes } from 'node:crypto'
import { closeSync, fsyncSync, openSync, renameSync, statSync, unlinkSync, writeSync } from 'node:fs'
import { dirname } from 'node:path'
import { MemoryError } from '../core/errors'

/** How long a change waits for the lock, and when a lock left by a dead process counts as stale. */
const LOCK_WAIT_MS = 10_000
const LOCK_STALE_MS = 30_000

function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms)
}

/** The file's identity (inode, size, mtime), so a reader can tell with one stat whether it changed. */
export function fileStamp(file: string): string {
  try {
    const st = statSync(file)
    return `${st.ino}:${st.size}:${st.mtimeMs}`
  } catch {
    return 'missing'
  }
}

/** Replaces `file` with `value` as JSON: a private temporary file, fsynced, renamed over it, the folder fsynced. */
export function writeJsonAtomic(file: string, value: unknown): void {
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`
  const fd = openSync(tmp, 'w', 0o600)
  try {
    writeSync(fd, JSON.stringify(value, null, 2))
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
  renameSync(tmp, file)
  try {
    const dir = openSync(dirname(file), 'r')
    try {
      fsyncSync(dir)
    } finally {
      closeSync(dir)
    }
  } catch {
    // some file systems refuse fsync on a directory; the rename is atomic regardless
  }
}

/** Runs `change` while holding `<file>.lock`; `what` names the file in errors ("the token registry"). */
export function withFileLock<T>(file: string, what: string, change: () => T): T {
  const lock = `${file}.lock`
  const deadline = Date.now() + LOCK_WAIT_MS
  for (;;) {
    try {
      closeSync(openSync(lock, 'wx', 0o600))
      break
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw new MemoryError('storage_failed', `cannot lock ${what}: ${(err as Error).message}`)
      try {
        if (Date.now() - statSync(lock).mtimeMs > LOCK_STALE_MS) unlinkSync(lock)
      } catch {
        // the holder released it meanwhile
      }
      if (Date.now() > deadline) throw new MemoryError('storage_failed', `${what} is locked by another process (${lock}); if none is running, remove that file`)
      sleepSync(5 + Math.random() * 20)
    }
  }
  try {
    return change()
  } finally {
    try {
      unlinkSync(lock)
    } catch {
      // already gone: nothing to release
    }
  }
}
