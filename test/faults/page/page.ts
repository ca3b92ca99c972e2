// The fault-test page: `window.cairnFaults` runs the engine in a module worker, sends it a
// stream of writes while recording which were acknowledged, and kills the worker on cue.
import * as Comlink from 'comlink'
import { connectEngine } from '../../../src/engine/client'
import type { FaultApi } from './fault.worker'
import type { Ack, KillPlan, Op, StreamOutcome } from './ops'

let worker: Worker | undefined
let api: Comlink.Remote<FaultApi> | undefined

function remote(): Comlink.Remote<FaultApi> {
  if (!api) throw new Error('start a worker first')
  return api
}

const faults = {
  /** A fresh worker: nothing of an earlier one stays in memory. */
  start(): void {
    worker?.terminate()
    worker = new Worker(new URL('./fault.worker.ts', import.meta.url), { type: 'module', name: 'cairn-faults' })
    // the same error transfer as the app, so MemoryError arrives with its code and details
    api = connectEngine(worker) as unknown as Comlink.Remote<FaultApi>
  },

  kill(): void {
    worker?.terminate()
    worker = undefined
    api = undefined
  },

  /** Calls a worker method; a MemoryError comes back as `{ error: { code, details } }`. */
  async call(method: keyof FaultApi, ...args: unknown[]): Promise<unknown> {
    try {
      return { value: await (remote()[method] as (...a: unknown[]) => Promise<unknown>)(...args) }
    } catch (err) {
      const e = err as { name?: string; code?: string; message?: string; details?: unknown }
      return { error: { name: e.name, code: e.code, message: e.message, details: e.details } }
    }
  },

  /** What the browser counts against this origin's quota, in bytes. */
  async usage(): Promise<number> {
    return (await navigator.storage.estimate()).usage ?? 0
  },

  /** Runs `ops` one after another until the plan kills the worker (or the stream ends, then kills). */
  runUntilKill(ops: Op[], plan: KillPlan): Promise<StreamOutcome> {
    const w = remote()
    const acks: Ack[] = []
    const slugs = new Map<number, string>()
    const errors: string[] = []
    const started = performance.now()
    let inFlight = -1
    let killed = false
    return new Promise((resolve) => {
      const kill = () => {
        if (killed) return
        killed = true
        faults.kill()
        resolve({ acks, inFlight, killedAtMs: performance.now() - started, errors })
      }
      let released = false
      const release = () => {
        released = true
        resolve({ acks: [...acks], inFlight, killedAtMs: performance.now() - started, errors })
      }
      if ('atMs' in plan) setTimeout(kill, plan.atMs)
      void (async () => {
        for (let i = 0; i < ops.length && !killed; i++) {
          const op = ops[i]!
          inFlight = i
          const target = op.kind === 'write' ? '' : slugs.get(op.ref)
          if (target === undefined) throw new Error(`op ${i} targets op ${op.kind === 'write' ? i : op.ref}, which was not acknowledged`)
          const done = op.kind === 'write' ? w.write(op.input) : op.kind === 'update' ? w.update(target, op.patch) : w.delete(target)
          const { slug } = await done
          if (killed) return
          inFlight = -1
          if (op.kind === 'write') slugs.set(i, slug)
          acks.push({ index: i, slug })
          if ('afterAcks' in plan && acks.length === plan.afterAcks) setTimeout(kill, plan.delayMs)
          if ('releaseAfterAcks' in plan && acks.length === plan.releaseAfterAcks) release()
        }
        if (!released) kill()
      })().catch((err: Error) => {
        errors.push(err.message)
        kill()
      })
    })
  },
}

declare global {
  interface Window {
    cairnFaults?: typeof faults
  }
}

window.cairnFaults = faults
document.documentElement.dataset.ready = 'true'
