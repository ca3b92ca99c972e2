// Several `token` commands run at once against one token file. The promise: every token
// added is kept and every revocation reported as done is saved.
import { spawn } from 'node:child_process'
import { mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { TokenRegistry } from '../../src/server/token-registry'

const SCRIPT = fileURLToPath(new URL('./token-writer.ts', import.meta.url))

describe('concurrent token commands', () => {
  it('six processes each adding and revoking 8 tokens lose none of them', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cairn-tokens-'))
    try {
      const file = join(dir, 'tokens.json')
      await Promise.all(Array.from({ length: 6 }, (_, p) => new Promise<void>((resolve, reject) => {
        const child = spawn(process.execPath, ['--import', 'tsx', SCRIPT, file, `p${p}`, '8'], { stdio: ['ignore', 'ignore', 'inherit'] })
        child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`writer ${p} exited with ${code}`))))
      })))
      const all = new TokenRegistry(file).list()
      expect(all).toHaveLength(48)
      expect(all.filter((c) => c.revokedAt === null)).toEqual([])
      // no temporary or lock file left behind
      expect(readdirSync(dir)).toEqual(['tokens.json'])
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 60_000)
})
