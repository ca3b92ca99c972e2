// The extension page: one Cairn memory in the extension's IndexedDB, ranked by BM25 and the
// shipped embedding model, both served from the extension's own files (models/, ort/).
import { configureOrt, createDefaultEmbedder, createMemory, listMemories, openMemory } from 'cairn-memory'

const NAME = 'extension notes'
const status = document.getElementById('status')
const result = document.getElementById('result')

async function open() {
  configureOrt({ wasmPaths: chrome.runtime.getURL('ort/') })
  const embedder = await createDefaultEmbedder({ baseUrl: chrome.runtime.getURL('models/') })
  const known = (await listMemories()).find((m) => m.name === NAME)
  const memory = known ? await openMemory(known.id, { embedder }) : await createMemory({ name: NAME, embedder })
  // the page's own full connection; its token is kept so a reopened popup reattaches
  const saved = localStorage.getItem('cairn.token')
  if (saved) {
    try {
      return { memory, conn: await memory.connectWithToken(saved) }
    } catch {
      localStorage.removeItem('cairn.token')
    }
  }
  const conn = await memory.connect({ agent: 'mv3-extension', tier: 'full' })
  if (conn.token) localStorage.setItem('cairn.token', conn.token)
  return { memory, conn }
}

const ready = open()
ready.then(
  ({ memory }) => {
    status.textContent = `Ready: ${memory.info.name} (${memory.info.retrieval.embedder})`
    document.body.dataset.ready = 'true'
  },
  (e) => {
    status.textContent = `Could not open the memory: ${e.message}`
  },
)

document.getElementById('write').addEventListener('submit', async (event) => {
  event.preventDefault()
  const form = event.currentTarget
  const f = new FormData(form)
  try {
    const { conn } = await ready
    const written = await conn.write({
      title: f.get('title'),
      content: f.get('content'),
      entities: [{ name: f.get('entity'), type: f.get('type'), description: f.get('description') }],
    })
    result.textContent = JSON.stringify({ written: written.slug })
    form.reset()
  } catch (e) {
    result.textContent = JSON.stringify({ error: e.code ?? 'error', message: e.message })
  }
})

document.getElementById('recall').addEventListener('submit', async (event) => {
  event.preventDefault()
  try {
    const { conn } = await ready
    const r = await conn.recall({ query: new FormData(event.currentTarget).get('query') })
    result.textContent = JSON.stringify({ entities: r.entities.map((e) => e.name), observations: r.observations.map((o) => o.title) })
  } catch (e) {
    result.textContent = JSON.stringify({ error: e.code ?? 'error', message: e.message })
  }
})
