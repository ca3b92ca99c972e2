// Each memory's engine, kept out of the public `Memory`: a module-private map that only
// `src/internals.ts` reads, so the package's types show no database, graph or index.
import type { MemoryEngine } from './memory-engine'
import { MemoryError } from '../core/errors'

const engines = new WeakMap<object, MemoryEngine>()

export function registerEngine(memory: object, engine: MemoryEngine): void {
  engines.set(memory, engine)
}

export function engineBehind(memory: object): MemoryEngine {
  const engine = engines.get(memory)
  if (!engine) throw new MemoryError('invalid_request', 'not a memory made by createMemory or openMemory')
  return engine
}
