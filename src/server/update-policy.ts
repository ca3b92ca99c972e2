// Decides whether an update from a connection may reach a room. The update is applied to a
// scratch copy of the room document and the maps' own change events say which keys it would
// add, change or delete; the tier decides which of those are allowed.
import * as Y from 'yjs'
import type { Tier } from '../core/types'
import { ROOT_NAMES, ROOTS, type RootName } from '../sync/layout'
import type { RefusalCode } from '../sync/refusal'
import { checkAlias, checkFile, checkFileBytes, checkObservation, checkRejected, type Checked } from '../sync/validate'

export type UpdateVerdict =
  | { ok: true; noop: boolean }
  /** The update only makes sense after changes the room has not received (yet). */
  | { ok: false; incomplete: true }
  | { ok: false; incomplete: false; code: RefusalCode; message: string; keys: Record<string, string[]> }

type Action = 'add' | 'update' | 'delete'

/** What a `read_write` connection may do to each map: additions everywhere, nothing else on observations and files. */
const ADDITIVE_RULES: Record<RootName, ReadonlySet<Action>> = {
  observations: new Set(['add']),
  files: new Set(['add']),
  fileBytes: new Set(['add']),
  // Accepting a merge re-points aliases that led to the merged entity, so updates pass.
  aliases: new Set(['add', 'update']),
  rejected: new Set(['add', 'update']),
}

const CHECKS: Record<RootName, (key: string, value: unknown) => Checked<unknown>> = {
  observations: checkObservation,
  aliases: checkAlias,
  rejected: checkRejected,
  files: checkFile,
  fileBytes: checkFileBytes,
}

const KEYS_REPORTED = 20

function sameValue(a: unknown, b: unknown): boolean {
  if (a instanceof Uint8Array && b instanceof Uint8Array) {
    return a.byteLength === b.byteLength && a.every((x, i) => x === b[i])
  }
  try {
    return JSON.stringify(a) === JSON.stringify(b)
  } catch {
    return false
  }
}

/** Structs or deletions waiting for history the document lacks, as a comparable string ('' when none). */
function pendingOf(doc: Y.Doc): string {
  const { pendingStructs, pendingDs } = doc.store
  if (!pendingStructs && !pendingDs) return ''
  return JSON.stringify([[...(pendingStructs?.missing ?? [])], pendingDs ? [...pendingDs] : []])
}

export function checkUpdate(tier: Tier, room: Y.Doc, update: Uint8Array): UpdateVerdict {
  if (tier === 'full') return { ok: true, noop: false }
  const scratch = new Y.Doc({ gc: room.gc })
  Y.applyUpdate(scratch, Y.encodeStateAsUpdate(room))
  const before = Y.snapshot(scratch)
  const pendingBefore = pendingOf(scratch)

  const changes = new Map<RootName, Map<string, { action: Action; oldValue: unknown }>>()
  for (const name of ROOT_NAMES) {
    const seen = new Map<string, { action: Action; oldValue: unknown }>()
    changes.set(name, seen)
    scratch.getMap(name).observe((event) => {
      for (const [key, info] of event.changes.keys) seen.set(key, { action: info.action, oldValue: info.oldValue })
    })
  }

  try {
    Y.applyUpdate(scratch, update)
  } catch {
    return { ok: false, incomplete: false, code: 'malformed', message: 'the update could not be decoded', keys: {} }
  }
  const changed = Y.equalSnapshots(before, Y.snapshot(scratch)) === false
  const pendingAfter = pendingOf(scratch)
  if (pendingAfter !== '' && pendingAfter !== pendingBefore) return { ok: false, incomplete: true }
  if (!changed) return { ok: true, noop: true }

  const touched: Record<string, string[]> = {}
  for (const [name, seen] of changes) {
    if (seen.size) touched[name] = [...seen.keys()].slice(0, KEYS_REPORTED)
  }

  if (tier === 'read') {
    return { ok: false, incomplete: false, code: 'read_only', message: 'this connection is read-only: its changes are not synced. Ask for a read_write connection to add observations.', keys: touched }
  }

  const unknownRoots = [...scratch.share.keys()].filter((name) => !(ROOT_NAMES as readonly string[]).includes(name))
  if (unknownRoots.length) {
    return { ok: false, incomplete: false, code: 'unknown_root', message: `the update writes ${unknownRoots.map((n) => `"${n.slice(0, 40)}"`).join(', ')}, which is not part of a memory document`, keys: { roots: unknownRoots.slice(0, KEYS_REPORTED) } }
  }

  const refused: Record<string, string[]> = {}
  const invalid: Record<string, string[]> = {}
  for (const [name, seen] of changes) {
    const map = scratch.getMap(name)
    for (const [key, { action, oldValue }] of seen) {
      // Re-setting an entry to the value it already has changes nothing a reader can see.
      if (action === 'update' && sameValue(oldValue, map.get(key))) continue
      if (!ADDITIVE_RULES[name].has(action)) {
        ;(refused[name] ??= []).push(key)
        continue
      }
      if (action !== 'delete' && !CHECKS[name](key, map.get(key)).ok) (invalid[name] ??= []).push(key)
    }
  }
  const cap = (r: Record<string, string[]>) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, v.slice(0, KEYS_REPORTED)]))
  if (Object.keys(refused).length) {
    const what = Object.entries(refused).map(([name, keys]) => `${keys.length} existing ${name === ROOTS.observations ? 'observation' : name} entr${keys.length === 1 ? 'y' : 'ies'}`).join(', ')
    return { ok: false, incomplete: false, code: 'not_additive', message: `a read_write connection may only add: the update changes or deletes ${what}. Editing and deleting observations needs a full connection.`, keys: cap(refused) }
  }
  if (Object.keys(invalid).length) {
    return { ok: false, incomplete: false, code: 'invalid_value', message: 'the update holds values that are not valid memory entries', keys: cap(invalid) }
  }
  return { ok: true, noop: false }
}
