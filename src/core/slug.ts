// Slugs are an observation's stable identity: made once from the title, never changed by edits.
import { slugProblem } from './identifiers'

/** Letters and digits (code points, so a letter outside the Basic Multilingual Plane is never cut in two). */
const MAX_BASE = 60

export function slugBase(title: string): string {
  const base = title
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, '-')
    .replace(/^-+|-+$/g, '')
  const cut = Array.from(base).slice(0, MAX_BASE).join('').replace(/-+$/g, '')
  return cut.length > 0 ? cut : 'note'
}

/**
 * A random suffix keeps slugs unique across devices that write offline with the same title;
 * `taken` guards the (unlikely) local collision.
 */
export function makeSlug(title: string, taken: (slug: string) => boolean, random: () => string): string {
  const base = slugBase(title)
  for (;;) {
    const slug = `${base}-${random()}`
    // the one rule every reader applies: a suffix outside it would make a note no peer or backup takes
    const problem = slugProblem(slug)
    if (problem !== null) throw new Error(`slug "${slug.slice(0, 80)}" ${problem}`)
    if (!taken(slug)) return slug
  }
}
