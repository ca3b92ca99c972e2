// `cairn connection` makes, lists and revokes the connections of a memory kept in a folder,
// and the token it prints is the connection the memory (and so `cairn mcp --token`) accepts.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { runConnection } from '../../src/cli/connections'
import { openNodeMemory } from '../../src/node-store/node-memory'
import { createDefaultEmbedder } from '../../src/search/default-embedder'

const dirs: string[] = []
afterEach(() => {
  vi.restoreAllMocks()
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})

async function cli(args: string[]): Promise<string> {
  let out = ''
  const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    out += String(chunk)
    return true
  })
  try {
    await runConnection(args)
  } finally {
    spy.mockRestore()
  }
  return out
}

describe('cairn connection', () => {
  it('adds a connection whose token the memory accepts with its tier, lists it, and revokes it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cairn-cli-conn-'))
    dirs.push(dir)
    const added = await cli(['add', '--agent', 'desk bot', '--tier', 'read', '--dir', dir])
    const token = /token \(shown once\): (\S+)/.exec(added)![1]!
    const id = /^(conn-\S+) desk bot \(read\)/.exec(added)![1]!

    const embedder = await createDefaultEmbedder()
    let opened = await openNodeMemory(dir, { embedder })
    const conn = await opened.memory.connectWithToken(token)
    expect([conn.id, conn.tier]).toEqual([id, 'read'])
    await expect(conn.write({ title: 't', content: 'c', entities: [] })).rejects.toMatchObject({ code: 'forbidden' })
    await opened.close()

    expect(await cli(['list', '--dir', dir])).toMatch(new RegExp(`^${id}\\tdesk bot\\tread\\tcreated `, 'm'))
    expect(await cli(['revoke', '--id', id, '--dir', dir])).toBe(`revoked ${id}\n`)
    expect(await cli(['list', '--dir', dir])).toContain('\trevoked ')
    opened = await openNodeMemory(dir, { embedder })
    await expect(opened.memory.connectWithToken(token)).rejects.toMatchObject({ code: 'forbidden' })
    await opened.close()
    await embedder.dispose?.()
  }, 60_000)

  it('refuses a bad tier before touching the memory', async () => {
    await expect(runConnection(['add', '--agent', 'x', '--tier', 'admin', '--dir', '/nonexistent/x'])).rejects.toMatchObject({ code: 'invalid_request' })
  })
})
