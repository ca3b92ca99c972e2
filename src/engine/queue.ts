// Writes to one memory run one at a time; reads never wait here.
import { Serial } from '../core/serial'

export class WriteQueue {
  private readonly serial = new Serial()
  constructor(private readonly lockName: string) {}

  run<T>(task: () => Promise<T>): Promise<T> {
    const locked = (): Promise<T> => {
      const locks = (globalThis as { navigator?: { locks?: LockManager } }).navigator?.locks
      // across tabs of one origin a Web Lock serializes too; in Node the in-process chain suffices
      return locks ? (locks.request(this.lockName, task) as Promise<T>) : task()
    }
    return this.serial.run(locked)
  }
}
