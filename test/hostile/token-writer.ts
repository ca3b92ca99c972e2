// One of several processes changing the token file at once: `node --import tsx
// token-writer.ts <file> <name> <count>` adds `count` tokens and revokes each, as the CLI would.
import { TokenRegistry } from '../../src/server/token-registry'

const [file, name, count] = process.argv.slice(2)
for (let i = 0; i < Number(count); i++) {
  const { connection } = new TokenRegistry(file!).add({ memoryId: 'mem-t', tier: 'read', agent: `${name}-${i}` })
  new TokenRegistry(file!).revoke(connection.id)
}
