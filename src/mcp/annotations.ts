// MCP tool annotations: what each tool does to the memory, so a client can decide which calls
// to confirm with the person. Read tools change nothing; update, delete and accepting a merge
// change what exists; a repeated update, delete or decision changes nothing more.
import type { ToolAnnotations } from '@modelcontextprotocol/sdk/types.js'

type Effect = Pick<ToolAnnotations, 'readOnlyHint' | 'destructiveHint' | 'idempotentHint'> & { title: string }

const READ = (title: string): Effect => ({ title, readOnlyHint: true })

export const TOOL_ANNOTATIONS: Record<string, Effect> = {
  write: { title: 'Write an observation', readOnlyHint: false, destructiveHint: false, idempotentHint: false },
  update: { title: 'Edit an observation', readOnlyHint: false, destructiveHint: true, idempotentHint: true },
  delete: { title: 'Delete an observation', readOnlyHint: false, destructiveHint: true, idempotentHint: true },
  recall: READ('Recall from memory'),
  get_observation: READ('Read an observation'),
  inspect_entity: READ('Inspect an entity'),
  list_files: READ('List appendix files'),
  read_file: READ('Read an appendix file'),
  // a second call with the same path is refused (conflict) and changes nothing
  store_file: { title: 'Store an appendix file', readOnlyHint: false, destructiveHint: false, idempotentHint: true },
  consolidate: { title: 'Propose merges', readOnlyHint: false, destructiveHint: false, idempotentHint: false },
  list_proposals: READ('List merge proposals'),
  accept_proposal: { title: 'Accept a merge', readOnlyHint: false, destructiveHint: true, idempotentHint: true },
  reject_proposal: { title: 'Reject a merge', readOnlyHint: false, destructiveHint: false, idempotentHint: true },
  list_single_valued: READ('List single-valued relationship types'),
  // replaces the list: setting the same list again changes nothing
  set_single_valued: { title: 'Declare single-valued relationship types', readOnlyHint: false, destructiveHint: true, idempotentHint: true },
}

export function toolAnnotations(name: string): ToolAnnotations {
  const effect = TOOL_ANNOTATIONS[name]
  if (!effect) throw new Error(`tool "${name}" has no MCP annotations; add it to TOOL_ANNOTATIONS`)
  // the memory is a closed world: no tool reaches outside it
  return { ...effect, openWorldHint: false }
}
