/// <reference types="vite-plugin-pwa/vanillajs" />
// The installable, offline side of the app: service worker registration with an
// update the person accepts, and the browser's storage quota for IndexedDB.
import { registerSW } from 'virtual:pwa-register'
import { writable, type Readable } from 'svelte/store'

const needRefreshStore = writable(false)
/** True while a new service worker is installed and waiting for a reload. */
export const needRefresh: Readable<boolean> = needRefreshStore

let applyUpdate: ((reloadPage?: boolean) => Promise<void>) | undefined

/** Registers the service worker that precaches the app. No-op where service workers are unavailable. */
export function registerServiceWorker(): void {
  if (typeof navigator === 'undefined' || !('serviceWorker' in navigator)) return
  applyUpdate = registerSW({
    onNeedRefresh: () => needRefreshStore.set(true),
    // reloadToUpdate reloads itself: the library does so only when the page was already
    // controlled at load, so an update found during the very first visit would not reload
    onNeedReload: () => undefined,
    onRegisterError: (error: unknown) => {
      // the app still works online without it; only offline use is lost
      console.warn('Cairn could not register its service worker; it will not work offline.', error)
    },
  })
}

/** Activates the waiting service worker and reloads into the new version. */
export async function reloadToUpdate(): Promise<void> {
  needRefreshStore.set(false)
  if (!applyUpdate) return location.reload()
  navigator.serviceWorker.addEventListener('controllerchange', () => location.reload(), { once: true })
  await applyUpdate(true)
}

/** Dismisses the update banner; the new version then loads on the next visit. */
export function dismissUpdate(): void {
  needRefreshStore.set(false)
}

export interface StorageInfo {
  /** Bytes this origin uses, as the browser estimates it. */
  usage: number
  /** Bytes this origin may use. */
  quota: number
  /** Whether the browser promised not to evict this origin's data under storage pressure. */
  persisted: boolean
}

const PERSIST_ASKED_KEY = 'cairn.storage.persist-asked'

/**
 * Asks once (remembered in localStorage) for persistent storage, so the browser does not
 * evict the memories under pressure. Firefox shows a prompt, so it must not repeat per load.
 * Returns whether storage is persistent now.
 */
export async function requestPersistentStorage(): Promise<boolean> {
  const storage = typeof navigator === 'undefined' ? undefined : navigator.storage
  if (!storage?.persisted || !storage.persist) return false
  if (await storage.persisted()) return true
  if (localStorage.getItem(PERSIST_ASKED_KEY)) return false
  localStorage.setItem(PERSIST_ASKED_KEY, new Date().toISOString())
  return storage.persist()
}

/** Current usage and quota, or undefined where the Storage API is missing. */
export async function storageInfo(): Promise<StorageInfo | undefined> {
  const storage = typeof navigator === 'undefined' ? undefined : navigator.storage
  if (!storage?.estimate) return undefined
  const [estimate, persisted] = await Promise.all([storage.estimate(), storage.persisted ? storage.persisted() : false])
  return { usage: estimate.usage ?? 0, quota: estimate.quota ?? 0, persisted }
}

/** Bytes as a short human figure, e.g. "18.4 MB". Decimal units, as browsers report quota. */
export function formatBytes(bytes: number): string {
  const units = ['B', 'kB', 'MB', 'GB', 'TB']
  let value = bytes
  let unit = 0
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000
    unit++
  }
  return `${unit === 0 ? value : value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`
}
