// `npm run mcp -- [options]` in the repository: the same command as `cairn mcp` (src/mcp/command.ts).
import { isUsageError, MCP_USAGE, runMcpCommand } from './command'

runMcpCommand(process.argv.slice(2)).catch((e: unknown) => {
  process.stderr.write(`${e instanceof Error ? e.message : String(e)}\n${isUsageError(e) ? `${MCP_USAGE}\n` : ''}`)
  process.exit(2)
})
