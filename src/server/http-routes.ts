// The sync server's HTTP face: the health check, the organization listing, a hint for any other
// request, and the WebSocket upgrade that hands each new socket to the server.
import { createServer, type IncomingMessage, type Server } from 'node:http'
import { WebSocketServer, type WebSocket } from 'ws'
import type { RouteHandler } from './member-listing'

export interface HttpRoutes {
  /** GET /org/memories */
  listing: RouteHandler
  /** POST /claim, when the server has a claim key (claim.ts). */
  claim?: RouteHandler
  /** Largest WebSocket message read, in bytes. */
  maxPayload: number
  /** A closing server gives new sockets no room. */
  closing: () => boolean
  /** A socket past the upgrade. */
  onSocket: (ws: WebSocket, req: IncomingMessage) => void
}

export function serveHttp(routes: HttpRoutes): { http: Server; wss: WebSocketServer } {
  const http = createServer((req, res) => {
    if (req.url === '/org/memories' || req.url?.startsWith('/org/memories?')) return routes.listing(req, res)
    if (routes.claim && req.url === '/claim') return routes.claim(req, res)
    if (req.url === '/healthz') {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}')
      return
    }
    res.writeHead(426, { 'content-type': 'text/plain' }).end('Cairn sync server: connect with a WebSocket to /<memory id>?token=...\n')
  })
  const wss = new WebSocketServer({ noServer: true, maxPayload: routes.maxPayload })
  http.on('upgrade', (req, socket, head) => {
    // clients reconnect as soon as a closing server says goodbye: those sockets get no room
    if (routes.closing()) return void socket.destroy()
    wss.handleUpgrade(req, socket, head, (ws) => routes.onSocket(ws, req))
  })
  return { http, wss }
}
