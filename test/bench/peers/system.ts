import type { PeerWorkload } from './workload'

/** What one call handed back, counted the same way for every system. */
export interface Answer {
  entities: number
  relations: number
}

export interface PeerSystem {
  name: string
  load(workload: PeerWorkload): Promise<void>
  search(query: string): Promise<Answer>
  /** Fetch entities by exact name, where the system has such a call. */
  open?(names: string[]): Promise<Answer>
  close(): Promise<void>
}
