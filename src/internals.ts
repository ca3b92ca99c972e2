/**
 * The door that code inside the package, tests and benchmarks use to reach a memory's engine.
 * It is not part of the package's public entry: applications and agents need nothing here.
 */
import type { Memory } from './engine/memory-handle'
import { engineBehind } from './engine/engine-door'
import type { MemoryEngine } from './engine/memory-engine'

export function engineOf(memory: Memory): MemoryEngine {
  return engineBehind(memory)
}

export { ownerOf, type MemoryOwner } from './engine/owner-door'
