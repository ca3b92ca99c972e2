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

export function placeLabel(node: { x: number; y: number; size: number }, textWidth: number, fontSize: number, view: { width: number; height: number }): LabelBox {
  const right = node.x + node.size + GAP
  const left = node.x - node.size - GAP - textWidth
  let x: number
  if (right >= 0 && right + textWidth <= view.width) x = right
  else if (left >= 0 && left + textWidth <= view.width) x = left
  else x = Math.max(0, Math.min(view.width - textWidth, node.x - textWidth / 2))
  const wanted = node.y + fontSize / 3
  const baseline = Math.max(fontSize * ASCENT, Math.min(view.height - fontSize * DESCENT, wanted))
  return { x, baseline, left: x, top: baseline - fontSize * ASCENT, right: x + textWidth, bottom: baseline + fontSize * DESCENT }
}
