// The page side of the engine boundary.
import * as Comlink from 'comlink'
import type { EngineHost } from './host'
import { installErrorTransfer } from './wire'

export type EngineClient = Comlink.Remote<EngineHost>

/** Wraps a worker (or any Comlink endpoint) that runs `exposeEngine`. */
export function connectEngine(endpoint: Comlink.Endpoint): EngineClient {
  installErrorTransfer()
  return Comlink.wrap<EngineHost>(endpoint)
}
