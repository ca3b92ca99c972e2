// Which connection owns each Yjs client id of a room: the first connection whose accepted
// update started that client. Kept per room as an append-only file of `<client> <connection>`
// lines under `<dataDir>/owners/`, so a restart never frees a device's client for another
// token to extend. A torn last line (a crash mid-append) is ignored.
import { mkdirSync } from 'node:fs'
import { open, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { ROOM_NAME } from './file-room-store'

/** Where a server keeps which connection owns each Yjs client id of a room. */
export interface OwnerTable {
  /** Makes the room's bindings known here before its first check (again after an unload). */
  load(room: string): Promise<void>
  ownerOf(room: string, client: number): string | undefined
  /**
   * Binds the clients to the connection at once (later checks see them) and resolves once the
   * binding is durable; rejects if another connection got one of them first.
   */
  bind(room: string, clients: number[], connectionId: string): Promise<void>
  /**
   * Tables shared by several servers: learns the owners of the client ids in an update another
   * server stored, before this server's room holds it.
   */
  learn?(room: string, update: Uint8Array): Promise<void>
}

/** The folder of `<dataDir>` that holds one `<room>.owners` file per room. */
export const OWNERS_DIR = 'owners'

/** A room's bindings from its owners file: the first line naming a client wins; a torn or foreign line is ignored. */
export function parseOwners(text: string): Map<number, string> {
  const owners = new Map<number, string>()
  for (const line of text.split('\n')) {
    const m = /^(\d{1,16}) (\S{1,200})$/.exec(line)
    if (m && !owners.has(Number(m[1]))) owners.set(Number(m[1]), m[2]!)
  }
  return owners
}

export class ClientOwners implements OwnerTable {
  private readonly dir: string
  private readonly rooms = new Map<string, Map<number, string>>()
  private readonly chains = new Map<string, Promise<void>>()

  constructor(dataDir: string) {
    this.dir = join(dataDir, OWNERS_DIR)
    mkdirSync(this.dir, { recursive: true })
  }

  private pathOf(room: string): string {
    if (!ROOM_NAME.test(room)) throw new Error(`invalid room name "${room.slice(0, 80)}"`)
    return join(this.dir, `${room}.owners`)
  }

  /** Reads the room's bindings once; later calls reuse them. */
  async load(room: string): Promise<void> {
    if (this.rooms.has(room)) return
    let text = ''
    try {
      text = await readFile(this.pathOf(room), 'utf8')
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err
    }
    if (!this.rooms.has(room)) this.rooms.set(room, parseOwners(text))
  }

  ownerOf(room: string, client: number): string | undefined {
    return this.rooms.get(room)?.get(client)
  }

  /** Binds the clients at once (later checks see them) and resolves when the binding is on disk. */
  bind(room: string, clients: number[], connectionId: string): Promise<void> {
    let owners = this.rooms.get(room)
    if (!owners) this.rooms.set(room, (owners = new Map()))
    const lines: string[] = []
    const fresh: number[] = []
    for (const c of clients) {
      if (owners.has(c)) continue
      owners.set(c, connectionId)
      fresh.push(c)
      lines.push(`${c} ${connectionId}\n`)
    }
    if (lines.length === 0) return this.chains.get(room) ?? Promise.resolve()
    const path = this.pathOf(room)
    const write = (this.chains.get(room) ?? Promise.resolve()).then(async () => {
      const file = await open(path, 'a')
      try {
        await file.write(lines.join(''))
        await file.datasync()
      } finally {
        await file.close()
      }
    }).catch((err: unknown) => {
      // Not on disk: forget the bindings, so the update's resend claims its clients again.
      for (const c of fresh) if (owners!.get(c) === connectionId) owners!.delete(c)
      throw err
    })
    this.chains.set(room, write.catch(() => undefined))
    return write
  }
}
