/**
 * The door that tests and benchmarks use to reach a memory's engine. It is not
 * part of the package's public entry: code outside tests and benchmarks should
 * need nothing here.
 */
import type { Memory } from './engine/memory-handle'
import type { MemoryEngine } from './engine/memory-engine'

export function engineOf(memory: Memory): MemoryEngine {
  return memory.engine
}
