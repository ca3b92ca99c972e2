// MemoryError crosses the worker boundary with its code and details intact.
import * as Comlink from 'comlink'
import { MemoryError, isMemoryError } from '../core/errors'

interface Thrown {
  memoryError: boolean
  code?: string
  message: string
  details?: Record<string, unknown>
  name?: string
}

let installed = false

export function installErrorTransfer(): void {
  if (installed) return
  installed = true
  const original = Comlink.transferHandlers.get('throw') as Comlink.TransferHandler<{ value: unknown }, unknown>
  Comlink.transferHandlers.set('throw', {
    canHandle: original.canHandle,
    serialize: ({ value }: { value: unknown }) => {
      const out: Thrown = isMemoryError(value)
        ? { memoryError: true, code: value.code, message: value.message, details: JSON.parse(JSON.stringify(value.details ?? {})) }
        : { memoryError: false, message: value instanceof Error ? value.message : String(value), name: value instanceof Error ? value.name : 'Error' }
      return [out, []]
    },
    deserialize: (t: Thrown) => {
      if (t.memoryError) throw new MemoryError(t.code as never, t.message, t.details ?? {})
      const err = new Error(t.message)
      err.name = t.name ?? 'Error'
      throw err
    },
  } as Comlink.TransferHandler<{ value: unknown }, Thrown>)
}
