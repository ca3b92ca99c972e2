// What each tier may do to each root map of a memory document: one table, read by the struct
// screen (which judges an update before anything is applied) and by the map rules (which
// check, after the room copy applied it, what its change events say).
import type { Tier } from '../core/types'
import type { RootName } from '../sync/layout'

export type Action = 'add' | 'update' | 'delete'

const ALL: ReadonlySet<Action> = new Set(['add', 'update', 'delete'])

const RULES: Record<Exclude<Tier, 'read'>, Record<RootName, ReadonlySet<Action>>> = {
  /** Additions everywhere; nothing else on observations and files. */
  read_write: {
    observations: new Set(['add']),
    files: new Set(['add']),
    fileBytes: new Set(['add']),
    // Accepting a merge re-points aliases that led to the merged entity, so updates pass.
    aliases: new Set(['add', 'update']),
    rejected: new Set(['add', 'update']),
    // connections are the owner's: a read_write connection cannot grant or revoke one
    access: new Set(),
    // so is who besides the connections may read the memory
    visibility: new Set(),
    // and the memory's settings (which relationship types are single-valued)
    settings: new Set(),
  },
  /** Anything, but a connection or the visibility is never deleted (a revoke is an update). */
  full: { observations: ALL, files: ALL, fileBytes: ALL, aliases: ALL, rejected: ALL, access: new Set(['add', 'update']), visibility: new Set(['add', 'update']), settings: ALL },
}

/** Whether `tier` may `action` an entry of `root`; a read connection may change nothing. */
export function tierAllows(tier: Tier, root: RootName, action: Action): boolean {
  return tier !== 'read' && RULES[tier][root].has(action)
}
