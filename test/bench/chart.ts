// A small latency-versus-store-size chart as hand-built SVG: both axes log-scaled, since peers differ
// by orders of magnitude; one polyline per series with a legend. No dependencies.
import { writeFileSync } from 'node:fs'

export interface ChartSeries {
  name: string
  points: Array<{ size: number; ms: number }>
}

const W = 640
const H = 360
const PAD = { left: 60, right: 150, top: 20, bottom: 44 }
const COLORS = ['#1b6ca8', '#d1495b', '#edae49', '#00798c', '#66a182', '#8d5a97', '#30343f']

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;')
const fmt = (n: number) => (n >= 1000 ? `${n / 1000}k` : String(n))

export function latencyChartSvg(series: ChartSeries[], title = 'p50 latency vs store size'): string {
  const points = series.flatMap((s) => s.points).filter((p) => p.size > 0 && Number.isFinite(p.ms))
  if (points.length === 0) throw new Error('latency chart: no points to draw')
  const minX = Math.log10(Math.min(...points.map((p) => p.size)))
  const maxX = Math.log10(Math.max(...points.map((p) => p.size)))
  // whole decades around the data, so tick labels are round numbers
  const minY = Math.floor(Math.log10(Math.max(1e-3, Math.min(...points.map((p) => p.ms)))))
  const maxY = Math.max(minY + 1, Math.ceil(Math.log10(Math.max(1e-3, ...points.map((p) => p.ms)))))
  const plotW = W - PAD.left - PAD.right
  const plotH = H - PAD.top - PAD.bottom
  const x = (size: number) => PAD.left + (maxX === minX ? plotW / 2 : ((Math.log10(size) - minX) / (maxX - minX)) * plotW)
  const y = (ms: number) => PAD.top + plotH - ((Math.log10(Math.max(ms, 10 ** minY)) - minY) / (maxY - minY)) * plotH
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="11">`,
    `<title>${esc(title)}</title>`,
    `<rect width="${W}" height="${H}" fill="#fff"/>`,
    `<line x1="${PAD.left}" y1="${PAD.top + plotH}" x2="${PAD.left + plotW}" y2="${PAD.top + plotH}" stroke="#333"/>`,
    `<line x1="${PAD.left}" y1="${PAD.top}" x2="${PAD.left}" y2="${PAD.top + plotH}" stroke="#333"/>`,
  ]
  // x ticks at every size measured; y ticks at every decade
  for (const size of [...new Set(points.map((p) => p.size))].sort((a, b) => a - b)) {
    out.push(`<text x="${x(size).toFixed(1)}" y="${PAD.top + plotH + 16}" text-anchor="middle">${fmt(size)}</text>`)
  }
  for (let d = minY; d <= maxY; d++) {
    const ms = 10 ** d
    out.push(`<text x="${PAD.left - 6}" y="${(y(ms) + 4).toFixed(1)}" text-anchor="end">${d < 0 ? ms.toFixed(-d) : ms.toFixed(0)}</text>`)
    out.push(`<line x1="${PAD.left}" y1="${y(ms).toFixed(1)}" x2="${PAD.left + plotW}" y2="${y(ms).toFixed(1)}" stroke="#eee"/>`)
  }
  out.push(`<text x="${PAD.left + plotW / 2}" y="${H - 8}" text-anchor="middle">store size (entities, log scale)</text>`)
  out.push(`<text x="14" y="${PAD.top + plotH / 2}" text-anchor="middle" transform="rotate(-90 14 ${PAD.top + plotH / 2})">ms (log scale)</text>`)
  series.forEach((s, i) => {
    const color = COLORS[i % COLORS.length]!
    const pts = s.points.filter((p) => p.size > 0 && Number.isFinite(p.ms)).sort((a, b) => a.size - b.size)
    out.push(`<polyline fill="none" stroke="${color}" stroke-width="2" points="${pts.map((p) => `${x(p.size).toFixed(1)},${y(p.ms).toFixed(1)}`).join(' ')}"/>`)
    for (const p of pts) out.push(`<circle cx="${x(p.size).toFixed(1)}" cy="${y(p.ms).toFixed(1)}" r="3" fill="${color}"/>`)
    const ly = PAD.top + 10 + i * 16
    out.push(`<rect x="${W - PAD.right + 12}" y="${ly - 8}" width="10" height="10" fill="${color}"/>`)
    out.push(`<text x="${W - PAD.right + 26}" y="${ly + 1}">${esc(s.name)}</text>`)
  })
  out.push('</svg>')
  return out.join('\n')
}

export function writeLatencyChart(path: string, series: ChartSeries[], title?: string): void {
  writeFileSync(path, latencyChartSvg(series, title))
}
