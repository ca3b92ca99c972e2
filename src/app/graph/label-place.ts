// Where a node's name is drawn so that it stays whole inside the view: right of the node when
// it fits there, otherwise left of it, otherwise moved in from the nearer edge; and never above
// or below the view. A node outside the view gets no label. Pure, so the scene's drawing and
// its tests use one rule.

export interface LabelBox {
  /** Left edge and baseline of the text, in view pixels. */
  x: number
  baseline: number
  /** The box the text covers. */
  left: number
  top: number
  right: number
  bottom: number
}

const GAP = 3
/** Text reaches about this far above its baseline and below it, in font sizes. */
const ASCENT = 0.8
const DESCENT = 0.25

export function inView(node: { x: number; y: number }, view: { width: number; height: number }): boolean {
  return node.x >= 0 && node.x <= view.width && node.y >= 0 && node.y <= view.height
}

/**
 * The label's box: the first of right, left, above and below the node that lies whole in the
 * view and clear of the labels already drawn (`taken`); when none is clear, the first that lies
 * in the view. A name that fits nowhere beside its node is moved in from the nearer edge.
 */
export function placeLabel(node: { x: number; y: number; size: number }, textWidth: number, fontSize: number, view: { width: number; height: number }, taken: readonly LabelBox[] = []): LabelBox {
  const box = (x: number, baseline: number): LabelBox => {
    const left = Math.max(0, Math.min(view.width - textWidth, x))
    const base = Math.max(fontSize * ASCENT, Math.min(view.height - fontSize * DESCENT, baseline))
    return { x: left, baseline: base, left, top: base - fontSize * ASCENT, right: left + textWidth, bottom: base + fontSize * DESCENT }
  }
  const right = node.x + node.size + GAP
  const left = node.x - node.size - GAP - textWidth
  const beside = node.y + fontSize / 3
  const candidates: LabelBox[] = []
  if (right + textWidth <= view.width) candidates.push(box(right, beside))
  if (left >= 0) candidates.push(box(left, beside))
  candidates.push(box(node.x - textWidth / 2, node.y - node.size - GAP - fontSize * DESCENT))
  candidates.push(box(node.x - textWidth / 2, node.y + node.size + GAP + fontSize * ASCENT))
  return candidates.find((c) => !taken.some((t) => overlaps(c, t))) ?? candidates[0]!
}

function overlaps(a: LabelBox, b: LabelBox): boolean {
  return a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom
}
