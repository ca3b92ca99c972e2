// Exposes `window.cairnSmoke` so browser tests can drive the smoke worker:
// a module worker reached through Comlink, with Dexie and onnxruntime-web inside.
// The worker starts on first access, so ordinary page loads never pay for it.
import * as Comlink from 'comlink'
import type { SmokeApi } from '../../worker/smoke.worker'

export type SmokeHook = Comlink.Remote<SmokeApi>

declare global {
  interface Window {
    cairnSmoke?: SmokeHook
  }
}

export function installSmokeHook(target: Window): void {
  let remote: SmokeHook | undefined
  const connect = (): SmokeHook => {
    remote ??= Comlink.wrap<SmokeApi>(
      new Worker(new URL('../../worker/smoke.worker.ts', import.meta.url), { type: 'module', name: 'cairn-smoke' }),
    )
    return remote
  }
  Object.defineProperty(target, 'cairnSmoke', { get: connect, configurable: true })
}
