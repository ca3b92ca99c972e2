// A static file server on 127.0.0.1 (random port) that counts requests per path, plus an
// in-memory Cache Storage, so tests exercise the real fetch + cache + checksum path.

import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { CacheStorageLike } from '../../src/search/model-cache'

export interface FileServer {
  url: string
  requests: Map<string, number>
  files: Map<string, Uint8Array>
  close(): Promise<void>
}

export async function serveFiles(files: Record<string, Uint8Array>): Promise<FileServer> {
  const table = new Map(Object.entries(files))
  const requests = new Map<string, number>()
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]!.replace(/^\//, '')
    requests.set(path, (requests.get(path) ?? 0) + 1)
    const body = table.get(path)
    if (!body) {
      res.writeHead(404).end('not found')
      return
    }
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': body.byteLength }).end(body)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/`,
    requests,
    files: table,
    close: () => new Promise((resolve, reject) => server.close((err) => (err ? reject(err) : resolve()))),
  }
}

/** Cache Storage semantics in memory: named caches of request URL -> stored response bytes. */
export class MemoryCacheStorage implements CacheStorageLike {
  readonly caches = new Map<string, Map<string, { body: Uint8Array; headers: Headers }>>()

  async open(name: string) {
    let entries = this.caches.get(name)
    if (!entries) this.caches.set(name, (entries = new Map()))
    const store = entries
    return {
      async match(request: string) {
        const hit = store.get(request)
        return hit ? new Response(hit.body.slice() as Uint8Array<ArrayBuffer>, { headers: hit.headers }) : undefined
      },
      async put(request: string, response: Response) {
        store.set(request, { body: new Uint8Array(await response.arrayBuffer()), headers: response.headers })
      },
      async delete(request: string) {
        return store.delete(request)
      },
    }
  }
}
