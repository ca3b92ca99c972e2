// Hash routing: `#/` lists memories; `#/m/<memory>/<screen>/<arg>` opens a screen of one memory.
export type Screen = 'capture' | 'notes' | 'recall' | 'entity' | 'observation' | 'consolidate' | 'files' | 'connections' | 'graph'

export interface Route {
  memoryId?: string
  screen?: Screen
  arg?: string
}

const SCREENS: readonly Screen[] = ['capture', 'notes', 'recall', 'entity', 'observation', 'consolidate', 'files', 'connections', 'graph']

function parse(hash: string): Route {
  const parts = hash.replace(/^#\/?/, '').split('/').map((p) => decodeURIComponent(p))
  if (parts[0] !== 'm' || !parts[1]) return {}
  const screen = SCREENS.includes(parts[2] as Screen) ? (parts[2] as Screen) : 'recall'
  return { memoryId: parts[1], screen, ...(parts[3] ? { arg: parts[3] } : {}) }
}

export function href(memoryId: string, screen: Screen, arg?: string): string {
  return `#/m/${encodeURIComponent(memoryId)}/${screen}${arg ? `/${encodeURIComponent(arg)}` : ''}`
}

export const route = $state<{ current: Route }>({ current: parse(location.hash) })

window.addEventListener('hashchange', () => {
  route.current = parse(location.hash)
})

export function go(to: string): void {
  location.hash = to
}
