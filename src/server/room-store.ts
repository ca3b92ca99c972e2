// The persistence seam of the sync server. The embedded implementation is FileRoomStore; a
// distributed deployment implements the same interface over its shared storage.

export interface RoomStore {
  /** Everything stored for the room, merged into one Yjs update, or null for a new room. */
  load(room: string): Promise<Uint8Array | null>
  /**
   * Records an update of the room. Returns at once; appends to one room reach storage in the
   * order they were made, and `flush` waits for them.
   */
  append(room: string, update: Uint8Array): void
  /**
   * Records an update and resolves once it is durable. The sync server passes every accepted
   * client update through it and lets the room (and so any peer or sync reply) see the update
   * only afterwards; a store without it gets `append` followed by `flush(room)`.
   */
  persist?(room: string, update: Uint8Array): Promise<void>
  /** Resolves when every append made so far (to `room`, or to every room) is durable. */
  flush(room?: string): Promise<void>
  /** Rewrites the room's history as one merged update; a hint, stores may do nothing. */
  compact(room: string): Promise<void>
  /** Flushes and releases resources; the store is not used afterwards. */
  close(): Promise<void>
  /**
   * For stores shared by several servers: calls `onUpdate` with updates other servers
   * appended to the room, while this server has the room loaded. Returns an unsubscribe.
   * An embedded store leaves it out.
   */
  subscribe?(room: string, onUpdate: (update: Uint8Array) => void): () => void
}
