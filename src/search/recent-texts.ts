// An embedder that remembers the vectors of the last few short texts it embedded, so a query
// ranked by both the entity index and the note index is embedded once.
import type { Embedder } from './embedder'

/** Texts longer than this are notes or descriptions, not queries: never remembered. */
const MAX_REMEMBERED_CHARS = 500

export function rememberRecentTexts(embedder: Embedder, capacity = 64): Embedder {
  const recent = new Map<string, Float32Array>()
  const remember = (text: string, vector: Float32Array) => {
    if (text.length > MAX_REMEMBERED_CHARS) return
    recent.delete(text)
    recent.set(text, vector)
    if (recent.size > capacity) recent.delete(recent.keys().next().value as string)
  }
  return {
    id: embedder.id,
    dimensions: embedder.dimensions,
    checksum: embedder.checksum,
    async embed(texts: string[]): Promise<Float32Array[]> {
      const known = new Map<string, Float32Array>()
      for (const t of texts) {
        const v = recent.get(t)
        if (v) known.set(t, v)
      }
      const missing = [...new Set(texts.filter((t) => !known.has(t)))]
      if (missing.length) {
        const vectors = await embedder.embed(missing)
        missing.forEach((t, i) => {
          known.set(t, vectors[i]!)
          remember(t, vectors[i]!)
        })
      }
      return texts.map((t) => known.get(t)!)
    },
    ...(embedder.dispose ? { dispose: () => embedder.dispose!() } : {}),
  }
}
