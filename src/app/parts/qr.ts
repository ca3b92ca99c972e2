// The QR image of a pairing link as one SVG path, drawn by qrcode-generator, which is loaded
// only when a device is paired (it is about 11 kB gzipped and no other screen needs it).

export interface QrImage {
  /** Modules per side, without the quiet zone. */
  size: number
  /** One path of unit squares, a square per dark module. */
  path: string
}

export async function qrImage(text: string): Promise<QrImage> {
  const { default: qrcode } = await import('qrcode-generator')
  // type 0 picks the smallest version that holds the text; L keeps a long link scannable
  const qr = qrcode(0, 'L')
  qr.addData(text, 'Byte')
  qr.make()
  const size = qr.getModuleCount()
  let path = ''
  for (let row = 0; row < size; row++) {
    for (let col = 0; col < size; col++) if (qr.isDark(row, col)) path += `M${col} ${row}h1v1h-1z`
  }
  return { size, path }
}
