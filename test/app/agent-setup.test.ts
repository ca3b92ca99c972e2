// The pasted MCP configuration starts `cairn mcp` as a replica of the memory with the
// connection's own token, in the arguments the command reads.
import { describe, expect, it } from 'vitest'
import { extensionSnippet, mcpClientConfig } from '../../src/app/agent-setup'

const setup = { serverUrl: 'ws://127.0.0.1:1234', memoryId: 'mem-1', memoryName: 'Research "notes"', token: 'tok_abc' }

describe('agent setup', () => {
  it('the MCP client config runs cairn mcp against the memory on its server with the token', () => {
    const config = JSON.parse(mcpClientConfig(setup)) as { mcpServers: { cairn: { command: string; args: string[] } } }
    const { command, args } = config.mcpServers.cairn
    expect(command).toBe('npx')
    const after = (flag: string) => args[args.indexOf(flag) + 1]
    expect(args.slice(2, 4)).toEqual(['cairn', 'mcp'])
    expect([after('--server'), after('--memory'), after('--token')]).toEqual(['ws://127.0.0.1:1234', 'mem-1', 'tok_abc'])
  })

  it('the extension snippet quotes what it embeds', () => {
    const code = extensionSnippet(setup)
    expect(code).toContain('const id = "mem-1"')
    expect(code).toContain('name: "Research \\"notes\\""')
    expect(code).toContain('memory.connectWithToken(token)')
  })
})
