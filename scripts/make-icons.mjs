// Draws the Cairn icon (three stacked stones on a slate tile) as SVG and PNG
// from one shape list, so the vector and raster icons cannot drift apart.
// Usage: node scripts/make-icons.mjs   (writes public/icons/)
import { mkdirSync, writeFileSync } from 'node:fs'
import { deflateSync } from 'node:zlib'

const outDir = new URL('../public/icons/', import.meta.url)
const tile = '#2f3b45'
// Ellipses in unit coordinates (0..1), drawn bottom to top.
const stones = [
  { cx: 0.5, cy: 0.73, rx: 0.31, ry: 0.115, fill: '#c9bfa9' },
  { cx: 0.49, cy: 0.52, rx: 0.225, ry: 0.095, fill: '#ddd5c4' },
  { cx: 0.51, cy: 0.35, rx: 0.135, ry: 0.075, fill: '#f4f1ea' },
]

function svg() {
  const shapes = stones
    .map((s) => `<ellipse cx="${s.cx * 512}" cy="${s.cy * 512}" rx="${s.rx * 512}" ry="${s.ry * 512}" fill="${s.fill}"/>`)
    .join('')
  return `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 512 512"><rect width="512" height="512" rx="96" fill="${tile}"/>${shapes}</svg>\n`
}

const rgb = (hex) => [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16))

/** Colour at a unit-space point, or null outside the tile. */
function sample(x, y, { rounded, scale }) {
  if (rounded) {
    const r = 96 / 512
    const dx = Math.max(r - x, 0, x - (1 - r))
    const dy = Math.max(r - y, 0, y - (1 - r))
    if (dx * dx + dy * dy > r * r) return null
  }
  // Maskable icons keep the artwork inside the central safe zone.
  const ux = 0.5 + (x - 0.5) / scale
  const uy = 0.5 + (y - 0.5) / scale
  let colour = tile
  for (const s of stones) {
    const nx = (ux - s.cx) / s.rx
    const ny = (uy - s.cy) / s.ry
    if (nx * nx + ny * ny <= 1) colour = s.fill
  }
  return rgb(colour)
}

/** RGBA pixels with 4x4 supersampling for smooth edges. */
function raster(size, options) {
  const px = Buffer.alloc(size * size * 4)
  const n = 4
  for (let y = 0; y < size; y++) {
    for (let x = 0; x < size; x++) {
      const acc = [0, 0, 0, 0]
      for (let sy = 0; sy < n; sy++) {
        for (let sx = 0; sx < n; sx++) {
          const c = sample((x + (sx + 0.5) / n) / size, (y + (sy + 0.5) / n) / size, options)
          if (!c) continue
          acc[0] += c[0]; acc[1] += c[1]; acc[2] += c[2]; acc[3] += 1
        }
      }
      const o = (y * size + x) * 4
      if (acc[3] > 0) for (let i = 0; i < 3; i++) px[o + i] = Math.round(acc[i] / acc[3])
      px[o + 3] = Math.round((acc[3] / (n * n)) * 255)
    }
  }
  return px
}

const crcTable = Array.from({ length: 256 }, (_, n) => {
  let c = n
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1
  return c >>> 0
})
function crc32(buf) {
  let c = 0xffffffff
  for (const b of buf) c = crcTable[(c ^ b) & 0xff] ^ (c >>> 8)
  return (c ^ 0xffffffff) >>> 0
}
function chunk(type, data) {
  const head = Buffer.alloc(8)
  head.writeUInt32BE(data.length, 0)
  head.write(type, 4, 'ascii')
  const crc = Buffer.alloc(4)
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0)
  return Buffer.concat([head, data, crc])
}
function png(size, pixels) {
  const ihdr = Buffer.alloc(13)
  ihdr.writeUInt32BE(size, 0)
  ihdr.writeUInt32BE(size, 4)
  ihdr.set([8, 6, 0, 0, 0], 8) // 8-bit RGBA, no interlace
  const rows = Buffer.alloc(size * (size * 4 + 1))
  for (let y = 0; y < size; y++) pixels.copy(rows, y * (size * 4 + 1) + 1, y * size * 4, (y + 1) * size * 4)
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(rows, { level: 9 })),
    chunk('IEND', Buffer.alloc(0)),
  ])
}

mkdirSync(outDir, { recursive: true })
writeFileSync(new URL('cairn.svg', outDir), svg())
for (const size of [192, 512]) {
  writeFileSync(new URL(`cairn-${size}.png`, outDir), png(size, raster(size, { rounded: true, scale: 1 })))
}
writeFileSync(new URL('cairn-maskable-512.png', outDir), png(512, raster(512, { rounded: false, scale: 0.8 })))
console.log('icons written to public/icons/')
