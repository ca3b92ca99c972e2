/**
 * The door that tests and benchmarks use to reach a memory's engine. It is not
 * part of the package's public entry: code outside tests and benchmarks should
 * need nothing here.
 */
import type { Memory } from './engine/open'
import type { MemoryEngine } from './engine/memory'

export function engineOf(memory: Memory): MemoryEngine {
  return memory.engine
}
