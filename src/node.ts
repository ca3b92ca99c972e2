// `cairn-memory/node`: what only Node offers. A memory kept durably in a folder, the MCP server
// over stdio or Streamable HTTP, and moving data in and out (MCP memory server files, backups,
// Markdown vaults, JSON). The library itself is `cairn-memory`.
export { openNodeMemory, type NodeMemory, type NodeMemoryOptions } from './node-store/node-memory'
export { openDurableIndexedDB, type DurableIndexedDB, type DurableStoreOptions } from './node-store/durable-indexeddb'
export { createMcpServer, startHttpMcpServer, type HttpMcpServer } from './mcp/server'
export { localMemoryProvider, organizationMemoryProvider, syncedMemoryProvider, type MemoryProvider } from './mcp/provider'
export { TOOL_ANNOTATIONS, toolAnnotations } from './mcp/annotations'
export { detectFormat, importMcpMemory, mergeBackup, type ImportFormat } from './interop/import'
export type { BackupMergeReport } from './interop/report-text'
export { convertMcpMemory, type McpMemoryReport } from './interop/mcp-memory-jsonl'
export { writeMarkdownVault } from './interop/vault-folder'
export { buildMarkdownVault, type VaultFile, type VaultReport } from './interop/markdown-vault'
export { exportGraphJson, type GraphExport } from './interop/json-export'
