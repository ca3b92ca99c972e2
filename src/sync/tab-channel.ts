// Keeps the copies of one memory document in the tabs (workers) of one browser profile in
// step, with or without a sync server. The tabs share the memory's database, where each saves
// every update of its document (`doc-store`), so the channel carries no content at all: a tab
// that saved an update says so, and the others read the new rows from their own database.
// Whatever is posted on the channel name, by a tab or any other script, can therefore only
// make a tab re-read what it already stores: nothing on the channel writes, grants or revokes.
import type * as Y from 'yjs'
import type { MemoryDB } from '../store/db'
import { applyStoredRows, rowsAfter } from './doc-store'
import { nextTurn } from './turns'

export interface TabChannel {
  /** Tells the other tabs that this one saved updates. */
  announce(): void
  /** Settles once every row announced so far has been read. */
  settled(): Promise<void>
  stop(): void
}

export function channelName(memoryId: string): string {
  return `cairn-memory-doc:${memoryId}`
}

/**
 * Joins the tabs of `memoryId`; `since` is the last row of the document log this tab has read
 * (the rows after it are read at once).
 */
export function joinTabChannel(memoryId: string, doc: Y.Doc, db: MemoryDB, since: number): TabChannel | null {
  if (typeof BroadcastChannel === 'undefined') return null
  const channel = new BroadcastChannel(channelName(memoryId))
  let seen = since
  let stopped = false
  let reading: Promise<void> = Promise.resolve()
  let again = false
  let queued = false

  const readNew = async () => {
    // Stored by this profile's own tabs; applied as stored, so this tab does not save it again,
    // a few rows a read and a group of rows a task (another tab's rewrite of the log is the
    // whole document)
    for await (const rows of rowsAfter(db, seen)) {
      if (stopped) return
      seen = rows[rows.length - 1]!.seq!
      await applyStoredRows(doc, rows, nextTurn, () => stopped)
    }
  }
  /** One read at a time; hints that arrive during a read make one more read after it. */
  const read = () => {
    if (queued) {
      again = true
      return
    }
    queued = true
    reading = reading.then(async () => {
      do {
        again = false
        try {
          await readNew()
        } catch {
          // a row the document cannot take (or a closed database) changes nothing here
        }
      } while (again && !stopped)
      queued = false
    })
  }
  // The message itself is never read: any message is only a hint to look at the database.
  channel.onmessage = () => read()
  ;(channel as unknown as { unref?: () => void }).unref?.()
  read()
  return {
    announce() {
      if (!stopped) channel.postMessage('saved')
    },
    async settled() {
      let seenPromise: Promise<void> | undefined
      while (seenPromise !== reading) {
        seenPromise = reading
        await seenPromise
      }
    },
    stop() {
      stopped = true
      channel.close()
    },
  }
}
