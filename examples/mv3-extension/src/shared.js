// What the page and the background worker share: the memory's name, and opening it with the
// shipped model and onnxruntime runtime served from the extension's own files (models/, ort/).
import { configureOrt, createDefaultEmbedder, createMemory, listMemories, openMemory } from 'cairn-memory'

export const NAME = 'extension notes'

/**
 * Opens the extension's memory, creating it on first use; says how long loading the model and
 * opening the memory took. The page and the worker may both
 * start at once: a Web Lock (shared by every context of the extension) keeps them from each
 * creating a memory of that name.
 */
export async function openNotes() {
  const start = performance.now()
  configureOrt({ wasmPaths: chrome.runtime.getURL('ort/') })
  const embedder = await createDefaultEmbedder({ baseUrl: chrome.runtime.getURL('models/') })
  const embedderReady = performance.now()
  const memory = await navigator.locks.request('cairn-example-open', async () => {
    const known = (await listMemories()).find((m) => m.name === NAME)
    return known ? openMemory(known.id, { embedder }) : createMemory({ name: NAME, embedder })
  })
  // the page and the worker each hold the memory live: its sync document (no server here)
  // carries each one's writes to the other
  await memory.sync()
  // how long the open took, shown by the worker's status
  const loadedMs = { embedder: Math.round(embedderReady - start), memory: Math.round(performance.now() - embedderReady) }
  return { memory, loadedMs }
}

/** A connection for `agent`, reattached with the token kept in `store` (get/set of one string) when there is one. */
export async function connectWith(memory, agent, store) {
  const saved = await store.get()
  if (saved) {
    try {
      return await memory.connectWithToken(saved)
    } catch {
      await store.set(null)
    }
  }
  const conn = await memory.connect({ agent, tier: 'full' })
  if (conn.token) await store.set(conn.token)
  return conn
}

/** A write of one note naming one entity, as the page's form and the worker's messages give it. */
export function noteInput({ title, content, entity, type, description }) {
  return { title, content, entities: [{ name: entity, type, description }] }
}

/** What a recall sends back to the page: names and titles. */
export function recallSummary(r) {
  return { entities: r.entities.map((e) => e.name), observations: r.observations.map((o) => o.title) }
}
