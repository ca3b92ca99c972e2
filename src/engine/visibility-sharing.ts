// Keeps a memory's visibility and its sync document in step. The document is the truth once
// it holds a visibility (the owner wrote it): every device adopts it into its own info. A
// device writes it only for the owner's own act: making the memory organization-visible or
// private (`setVisibility`), or creating it organization-visible; a device that joined a
// memory never writes it, so a member or a read_write device is never refused for it. Storing
// a visibility on this device (registry row and the memory's own info) is here too.
import type * as Y from 'yjs'
import { MemoryError } from '../core/errors'
import { visibilityProblem } from '../core/identifiers'
import { Serial } from '../core/serial'
import type { MemoryInfo, Visibility } from '../core/types'
import { saveInfo } from '../store/commit'
import { RegistryDB, type MemoryDB } from '../store/db'
import { stored } from '../store/storage-error'
import { readVisibility, visibilityMap, writeVisibility } from '../sync/visibility'

const SHARING_ORIGIN = Symbol('cairn-visibility')

export interface VisibilityHost {
  info(): MemoryInfo
  /** Stores a visibility another holder wrote into the document. */
  adopt(v: { visibility: Visibility; orgId: string | null }): Promise<void>
  /** Whether this device owes the document its visibility (the owner's change, not shared yet). */
  pending(): Promise<boolean>
  /** Called once the pending change is in the document. */
  shared(): Promise<void>
}

export interface VisibilitySharing {
  /** Writes a visibility into the document at once (the owner's change; the memory stores it after). */
  share(v: { visibility: Visibility; orgId: string | null }): void
  /** Settles once the document's visibility, as seen so far, is adopted. */
  settled(): Promise<void>
  stop(): void
}

export function shareVisibilityThrough(doc: Y.Doc, host: VisibilityHost): VisibilitySharing {
  const steps = new Serial()
  const later = (step: () => Promise<void>) => {
    // a storage failure leaves the old info until the next bind reads the document again
    void steps.run(step).catch(() => undefined)
  }
  const write = (v: { visibility: Visibility; orgId: string | null } = host.info()) => {
    writeVisibility(doc, { visibility: v.visibility, orgId: v.visibility === 'organization' ? v.orgId : null, name: host.info().name }, SHARING_ORIGIN)
  }
  const adoptFromDoc = () => {
    const v = readVisibility(doc)
    const info = host.info()
    if (v && (v.visibility !== info.visibility || v.orgId !== (info.visibility === 'organization' ? info.orgId : null))) {
      later(() => host.adopt({ visibility: v.visibility, orgId: v.orgId }))
    }
  }
  later(async () => {
    if (await host.pending()) {
      write()
      await host.shared()
    } else adoptFromDoc()
  })
  const observer = (_event: Y.YMapEvent<unknown>, tr: Y.Transaction) => {
    if (tr.origin !== SHARING_ORIGIN) adoptFromDoc()
  }
  const map = visibilityMap(doc)
  map.observe(observer)
  return {
    share: (v) => write(v),
    settled: () => steps.drained(),
    stop: () => map.unobserve(observer),
  }
}

/** Refuses a visibility a memory may not hold (see `visibilityProblem`). */
export function checkVisibilityChange(visibility: unknown, orgId: unknown): asserts visibility is MemoryInfo['visibility'] {
  const problem = visibilityProblem(visibility, orgId)
  if (problem !== null) throw new MemoryError('invalid_request', problem)
}

/**
 * Stores a memory's visibility in its registry row and its own database. `owed`: the change is
 * this device's (the owner's), to be written into the sync document; false when adopting one.
 */
export async function storeVisibility(engine: { info: MemoryInfo; db: MemoryDB }, visibility: unknown, orgId: unknown, owed: boolean): Promise<MemoryInfo> {
  checkVisibilityChange(visibility, orgId)
  const next: Pick<MemoryInfo, 'visibility' | 'orgId'> = { visibility, orgId: visibility === 'organization' ? (orgId as string) : null }
  const registry = new RegistryDB(engine.db.deps)
  try {
    await stored(() => registry.memories.update(engine.info.id, next))
  } finally {
    registry.close()
  }
  const info = { ...engine.info, ...next }
  await saveInfo(engine.db, info, owed)
  Object.assign(engine.info, next)
  return structuredClone(engine.info)
}
