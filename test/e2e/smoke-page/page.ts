// A test page, built beside the app only for the browser tests (test/e2e/global-setup.ts):
// exposes `window.cairnSmoke` so they can drive the smoke worker, a module worker reached
// through Comlink with Dexie and onnxruntime-web inside. The app itself ships neither.
import * as Comlink from 'comlink'
import type { SmokeApi } from './smoke.worker'

export type SmokeHook = Comlink.Remote<SmokeApi>

declare global {
  interface Window {
    cairnSmoke?: SmokeHook
  }
}

function installSmokeHook(target: Window): void {
  let remote: SmokeHook | undefined
  const connect = (): SmokeHook => {
    remote ??= Comlink.wrap<SmokeApi>(
      new Worker(new URL('./smoke.worker.ts', import.meta.url), { type: 'module', name: 'cairn-smoke' }),
    )
    return remote
  }
  Object.defineProperty(target, 'cairnSmoke', { get: connect, configurable: true })
}

installSmokeHook(window)
// the tests wait for this, as on the app's pages
document.documentElement.dataset.ready = 'true'
