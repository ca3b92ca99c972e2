// Reloads the token file and the organizations file when another process (the CLI) writes
// them, so a token added or revoked there takes effect on a running server.
import { watch, type FSWatcher } from 'node:fs'
import type { SyncLog } from './log'
import { ORGS_FILE, type OrgRegistry } from './org-registry'
import { TOKENS_FILE, type TokenRegistry } from './token-registry'

/** Watches `dataDir`; the returned function stops watching. */
export function watchDataDir(dataDir: string, registry: TokenRegistry, orgs: OrgRegistry | undefined, log: SyncLog): () => void {
  let watcher: FSWatcher | undefined
  let reloadTimer: NodeJS.Timeout | undefined
  try {
    watcher = watch(dataDir, (_event, filename) => {
      if (filename === ORGS_FILE) {
        try {
          orgs?.reload()
        } catch (err) {
          log('error', 'org_reload_failed', { error: (err as Error).message })
        }
        return
      }
      if (filename !== TOKENS_FILE) return
      clearTimeout(reloadTimer)
      reloadTimer = setTimeout(() => {
        try {
          registry.reload()
        } catch (err) {
          log('error', 'token_reload_failed', { error: (err as Error).message })
        }
      }, 50)
    })
  } catch (err) {
    log('warn', 'token_watch_unavailable', { error: (err as Error).message })
  }
  return () => {
    watcher?.close()
    clearTimeout(reloadTimer)
  }
}
