// The graph's rules that need no WebGL: one color per entity type with the legend that names
// them, and label placement that keeps every name whole inside the view.
import { describe, expect, it } from 'vitest'
import { OTHER_COLOR, TYPE_PALETTE, typeColors } from '../../src/app/graph/colors'
import { inView, placeLabel } from '../../src/app/graph/label-place'

describe('graph colors', () => {
  it('give each type its own color, most common first, and the legend counts them', () => {
    const nodes = [...Array(4).fill({ type: 'person' }), ...Array(3).fill({ type: 'organization' }), { type: 'place' }, { type: 'event' }]
    const { colorOf, legend } = typeColors(nodes)
    expect(legend.map((e) => [e.type, e.count])).toEqual([['person', 4], ['organization', 3], ['event', 1], ['place', 1]])
    expect(new Set(legend.map((e) => e.color)).size).toBe(4)
    expect(colorOf('person')).toBe(TYPE_PALETTE[0])
    expect(legend.map((e) => colorOf(e.type!))).toEqual(legend.map((e) => e.color))
  })

  it('put the types beyond the palette under one "other" entry', () => {
    const nodes = Array.from({ length: TYPE_PALETTE.length + 3 }, (_, i) => ({ type: `kind${String(i).padStart(2, '0')}` }))
    const { colorOf, legend } = typeColors(nodes)
    expect(legend).toHaveLength(TYPE_PALETTE.length)
    expect(legend.at(-1)).toEqual({ type: null, color: OTHER_COLOR, count: 4 })
    expect(colorOf('kind12')).toBe(OTHER_COLOR)
  })
})

describe('label placement', () => {
  const view = { width: 400, height: 300 }
  const inside = (b: { left: number; top: number; right: number; bottom: number }) => b.left >= 0 && b.top >= 0 && b.right <= view.width && b.bottom <= view.height

  it('draws right of the node where it fits, left of it at the right edge', () => {
    expect(placeLabel({ x: 100, y: 100, size: 5 }, 80, 13, view).left).toBeGreaterThan(100)
    const atEdge = placeLabel({ x: 380, y: 100, size: 5 }, 80, 13, view)
    expect(atEdge.right).toBeLessThan(380)
    expect(inside(atEdge)).toBe(true)
  })

  it('moves a label off one already drawn: to the left, above or below its node', () => {
    const first = placeLabel({ x: 100, y: 100, size: 5 }, 120, 13, view)
    const second = placeLabel({ x: 110, y: 104, size: 5 }, 120, 13, view, [first])
    const clear = (a: typeof first, b: typeof first) => a.right <= b.left || b.right <= a.left || a.bottom <= b.top || b.bottom <= a.top
    expect(clear(first, second)).toBe(true)
    expect(inside(second)).toBe(true)
    // with no room clear of the others, it still lies whole in the view
    const crowded = [0, 1, 2, 3].map(() => ({ x: 0, baseline: 0, left: 0, top: 0, right: 400, bottom: 300 }))
    expect(inside(placeLabel({ x: 200, y: 150, size: 5 }, 120, 13, view, crowded))).toBe(true)
  })

  it('labels no node outside the view', () => {
    expect([inView({ x: -1, y: 10 }, view), inView({ x: 401, y: 10 }, view), inView({ x: 10, y: 301 }, view), inView({ x: 400, y: 300 }, view)]).toEqual([false, false, false, true])
  })

  it('keeps every label whole in the view, wherever the node is in it', () => {
    for (const x of [0, 10, 150, 390, 400]) {
      for (const y of [0, 5, 150, 298, 300]) {
        if (!inView({ x, y }, view)) continue
        for (const width of [20, 120, 390]) expect(inside(placeLabel({ x, y, size: 8 }, width, 13, view)), `${x},${y} ${width}`).toBe(true)
      }
    }
  })
})
