// Node colors by entity type, and the legend that names them: shared by the scene and the
// screen, so the legend never needs sigma to load. The most common types get the first
// colors, so a slice's main kinds of thing are told apart at a glance; the rest share grey.

/** Distinct hues that stay apart for common color blindness (after Okabe-Ito and Tableau 10). */
export const TYPE_PALETTE = ['#2563eb', '#d97706', '#059669', '#db2777', '#7c3aed', '#0891b2', '#b45309', '#4d7c0f', '#be123c', '#475569']
/** The one color of every type beyond the palette. */
export const OTHER_COLOR = '#94a3b8'

export interface LegendEntry {
  /** The entity type as stored (`organization`), or null for "other types". */
  type: string | null
  color: string
  count: number
}

/** One color per type of `nodes`, most common type first (ties by name), and the legend in that order. */
export function typeColors(nodes: ReadonlyArray<{ type: string }>): { colorOf(type: string): string; legend: LegendEntry[] } {
  const counts = new Map<string, number>()
  for (const n of nodes) counts.set(n.type, (counts.get(n.type) ?? 0) + 1)
  const ranked = [...counts].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
  // a whole palette of types and one more: that one keeps its own color rather than "other"
  const named = ranked.length <= TYPE_PALETTE.length ? ranked : ranked.slice(0, TYPE_PALETTE.length - 1)
  const colors = new Map(named.map(([type], i) => [type, TYPE_PALETTE[i]!]))
  const legend: LegendEntry[] = named.map(([type, count], i) => ({ type, color: TYPE_PALETTE[i]!, count }))
  const rest = ranked.slice(named.length).reduce((sum, [, count]) => sum + count, 0)
  if (rest > 0) legend.push({ type: null, color: OTHER_COLOR, count: rest })
  return { colorOf: (type) => colors.get(type) ?? OTHER_COLOR, legend }
}
