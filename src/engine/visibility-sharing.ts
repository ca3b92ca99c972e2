// Keeps a memory's visibility and its sync document in step. The document is the truth once
// it holds a visibility (the owner wrote it): every device adopts it into its own info. A
// device writes it only for the owner's own act: making the memory organization-visible or
// private (`setVisibility`), or creating it organization-visible; a device that joined a
// memory never writes it, so a member or a read_write device is never refused for it.
import type * as Y from 'yjs'
import { Serial } from '../core/serial'
import type { MemoryInfo, Visibility } from '../core/types'
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
