// Where a browser's onnxruntime finds its files: always per-file URLs (a folder would make the
// bundled runtime import its glue at run time, which service workers forbid), made absolute
// against the page or worker that asks.
import { describe, expect, it } from 'vitest'
import { runtimeFiles } from '../../src/search/ort'

const base = 'chrome-extension://abc/background.js'

describe('runtime files', () => {
  it('turns a folder into the URLs of the wasm and its glue', () => {
    expect(runtimeFiles('chrome-extension://abc/ort/', base)).toEqual({ wasm: 'chrome-extension://abc/ort/ort-wasm-simd-threaded.wasm', glue: 'chrome-extension://abc/ort/ort-wasm-simd-threaded.mjs' })
    expect(runtimeFiles('/static/ort/', 'https://example.org/app/index.html')).toEqual({ wasm: 'https://example.org/static/ort/ort-wasm-simd-threaded.wasm', glue: 'https://example.org/static/ort/ort-wasm-simd-threaded.mjs' })
  })

  it('keeps per-file URLs, relative ones made absolute', () => {
    expect(runtimeFiles({ wasm: 'vendor/ort.wasm' }, base).wasm).toBe('chrome-extension://abc/vendor/ort.wasm')
    expect(runtimeFiles({ wasm: new URL('https://cdn.example/ort.wasm'), mjs: 'https://cdn.example/ort.mjs' }, base)).toEqual({ wasm: 'https://cdn.example/ort.wasm', glue: 'https://cdn.example/ort.mjs' })
  })
})
