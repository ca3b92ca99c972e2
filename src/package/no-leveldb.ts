// Stands in for y-leveldb in the bundled CLI: @y/websocket-server imports it for its optional
// YPERSISTENCE mode, which Cairn does not use (its rooms persist through RoomStore), and its
// native leveldown binding has no place in an installed package.
export class LeveldbPersistence {
  constructor() {
    throw new Error('LevelDB persistence is not part of cairn-memory; unset YPERSISTENCE (rooms are kept under --data)')
  }
}
