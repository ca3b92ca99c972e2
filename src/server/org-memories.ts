// Which rooms are visible to which organization, so the server can list an organization's
// memories without loading every room. The room documents are the truth (their `visibility`
// map, written by the owner); this index follows them: every room notes its visibility when
// it loads and whenever it changes, and the index is saved to `<dataDir>/org-memories.json`
// (atomically) so a restarted server lists rooms it has not loaded yet.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { SyncLog } from './log'
import { withFileLock, writeJsonAtomic } from './json-file'
import type { SharedVisibility } from '../sync/visibility'

export const ORG_MEMORIES_FILE = 'org-memories.json'

export interface OrgMemory {
  id: string
  name: string
  /** The agent of the connection that made the memory visible to the organization, when the server saw it. */
  publishedBy: string | null
}

export class OrgMemories {
  private readonly file: string
  private readonly rooms = new Map<string, { orgId: string; name: string; publishedBy: string | null }>()

  constructor(dataDir: string, private readonly log: SyncLog) {
    this.file = join(dataDir, ORG_MEMORIES_FILE)
    try {
      const parsed = JSON.parse(readFileSync(this.file, 'utf8')) as { rooms?: Record<string, { orgId?: unknown; name?: unknown; publishedBy?: unknown }> }
      for (const [room, v] of Object.entries(parsed.rooms ?? {})) {
        if (typeof v?.orgId === 'string' && typeof v.name === 'string') this.rooms.set(room, { orgId: v.orgId, name: v.name, publishedBy: typeof v.publishedBy === 'string' ? v.publishedBy : null })
      }
    } catch (err) {
      // a missing index starts empty; an unreadable one is rebuilt as rooms load
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') log('warn', 'org_index_unreadable', { error: (err as Error).message })
    }
  }

  /**
   * Records a room's visibility as its document now holds it (null: none, so private), and who
   * changed it when a socket did (`by`); a publisher stays known while the organization does.
   */
  note(room: string, v: SharedVisibility | null, by?: string): void {
    const before = this.rooms.get(room)
    const publishedBy = by ?? (before?.orgId === v?.orgId ? before?.publishedBy ?? null : null)
    const after = v?.visibility === 'organization' && v.orgId ? { orgId: v.orgId, name: v.name, publishedBy } : undefined
    if (before?.orgId === after?.orgId && before?.name === after?.name && before?.publishedBy === after?.publishedBy) return
    if (after) this.rooms.set(room, after)
    else this.rooms.delete(room)
    try {
      withFileLock(this.file, 'the organization memory index', () => writeJsonAtomic(this.file, { version: 1, rooms: Object.fromEntries(this.rooms) }))
    } catch (err) {
      // the live answer stays right; only a restart before the next change would miss it
      this.log('error', 'org_index_write_failed', { room, error: (err as Error).message })
    }
  }

  /** Every room the index shows to an organization, with that organization. */
  entries(): Array<{ room: string; orgId: string; name: string; publishedBy: string | null }> {
    return [...this.rooms].map(([room, v]) => ({ room, ...v }))
  }

  /** The rooms visible to an organization, by name. */
  of(orgId: string): OrgMemory[] {
    return [...this.rooms].filter(([, v]) => v.orgId === orgId).map(([id, v]) => ({ id, name: v.name, publishedBy: v.publishedBy })).sort((a, b) => a.name.localeCompare(b.name) || a.id.localeCompare(b.id))
  }
}
