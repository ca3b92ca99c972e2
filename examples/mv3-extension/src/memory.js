// The extension page: one Cairn memory in the extension's IndexedDB, ranked by BM25 and the
// shipped embedding model, both served from the extension's own files (models/, ort/). The
// background worker (background.js) opens the same memory.
import { connectWith, noteInput, openNotes, recallSummary } from './shared.js'

const status = document.getElementById('status')
const result = document.getElementById('result')

// the page's own full connection; its token is kept so a reopened popup reattaches
const tokenStore = {
  get: () => localStorage.getItem('cairn.token'),
  set: (token) => (token ? localStorage.setItem('cairn.token', token) : localStorage.removeItem('cairn.token')),
}

async function open() {
  const { memory } = await openNotes()
  return { memory, conn: await connectWith(memory, 'mv3-extension', tokenStore) }
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
    const written = await conn.write(noteInput(Object.fromEntries(f)))
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
    result.textContent = JSON.stringify(recallSummary(r))
  } catch (e) {
    result.textContent = JSON.stringify({ error: e.code ?? 'error', message: e.message })
  }
})
