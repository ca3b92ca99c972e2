// The extension's background service worker: the same Cairn memory as the page, opened here so
// the extension writes and recalls with no page open. Other parts of the extension (the page, a
// content script) send it { op: 'write', note } or { op: 'recall', query } with
// chrome.runtime.sendMessage. The library's browser build runs here as is: its onnxruntime needs
// no run-time import(), which service workers forbid.
import { connectWith, noteInput, openNotes, recallSummary } from './shared.js'

// the token lives in chrome.storage: a service worker has no localStorage
const tokenStore = {
  get: async () => (await chrome.storage.local.get('cairnWorkerToken')).cairnWorkerToken ?? null,
  set: (token) => chrome.storage.local.set({ cairnWorkerToken: token }),
}

let opening
/** Opened on the first message after each start of the worker, and kept while it lives. */
function notes() {
  if (!opening) {
    opening = (async () => {
      const { memory, loadedMs } = await openNotes()
      return { memory, loadedMs, conn: await connectWith(memory, 'mv3-background', tokenStore) }
    })()
    // a failed open (the runtime not served, say) is tried again on the next message
    opening.catch(() => (opening = undefined))
  }
  return opening
}

async function handle(message) {
  const { memory, loadedMs, conn } = await notes()
  switch (message?.op) {
    case 'status':
      // `started` tells one run of the worker from the next
      return { ready: `${memory.info.name} (${memory.info.retrieval.embedder})`, started: performance.timeOrigin, loadedMs }
    case 'write':
      return { written: (await conn.write(noteInput(message.note))).slug }
    case 'recall':
      return recallSummary(await conn.recall({ query: message.query }))
    default:
      return { error: 'invalid_request', message: 'op is "status", "write" or "recall"' }
  }
}

chrome.runtime.onMessage.addListener((message, _sender, reply) => {
  if (message?.to !== 'cairn') return false
  handle(message).then(reply, (e) => reply({ error: e.code ?? 'error', message: e.message }))
  return true // the reply comes later
})

// for the DevTools console of the worker (and the example's benchmark): the open memory
self.cairnNotes = notes
