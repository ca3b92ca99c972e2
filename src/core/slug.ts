// Slugs are an observation's stable identity: made once from the title, never changed by edits.

const MAX_BASE = 60

export function slugBase(title: string): string {
  const base = title
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, MAX_BASE)
    .replace(/-+$/g, '')
  return base.length > 0 ? base : 'note'
}

/**
 * A random suffix keeps slugs unique across devices that write offline with the same title;
 * `taken` guards the (unlikely) local collision.
 */
export function makeSlug(title: string, taken: (slug: string) => boolean, random: () => string): string {
  const base = slugBase(title)
  for (;;) {
    const slug = `${base}-${random()}`
    if (!taken(slug)) return slug
  }
}
