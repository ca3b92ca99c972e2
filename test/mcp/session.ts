// One agent session, the same over every transport: write, recall, edit, delete, consolidate.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { expect } from 'vitest'

export async function call(client: Client, name: string, args: Record<string, unknown> = {}): Promise<{ isError: boolean; body: any }> {
  const r = (await client.callTool({ name, arguments: args })) as { isError?: boolean; content: Array<{ type: string; text: string }> }
  return { isError: Boolean(r.isError), body: JSON.parse(r.content[0]!.text) }
}

async function ok(client: Client, name: string, args: Record<string, unknown> = {}): Promise<any> {
  const r = await call(client, name, args)
  if (r.isError) throw new Error(`${name} failed: ${JSON.stringify(r.body)}`)
  return r.body
}

const grace = { name: 'Grace Hopper', type: 'person', description: 'Computer scientist and US Navy rear admiral who pioneered compilers' }
const cobol = { name: 'COBOL', type: 'project', description: 'Business-oriented programming language designed in 1959' }
const sperry = { name: 'Sperry Rand', type: 'organization', description: 'Company whose UNIVAC division employed Grace Hopper and built early business computers' }

export async function agentSession(client: Client): Promise<void> {
  const { tools } = await client.listTools()
  expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(['write', 'update', 'delete', 'recall', 'consolidate', 'accept_proposal', 'reject_proposal', 'store_file']))
  for (const t of tools) expect(t.inputSchema.type).toBe('object')

  const first = await ok(client, 'write', {
    title: 'Grace Hopper and COBOL',
    content: 'Grace Hopper shaped COBOL, drawing on her FLOW-MATIC work.',
    category: 'history',
    entities: [grace, cobol],
    relationships: [{ source: 'Grace Hopper', type: 'works_on', target: 'COBOL' }],
  })
  await ok(client, 'write', {
    title: 'Sperry Rand backs COBOL',
    content: 'Sperry Rand sent engineers to the COBOL design effort and shipped an early compiler.',
    category: 'history',
    entities: [cobol, sperry],
    relationships: [{ source: 'Sperry Rand', type: 'supports', target: 'COBOL' }],
  })
  const third = await ok(client, 'write', {
    title: 'Hopper at Sperry Rand',
    content: 'Grace Hopper led automatic programming at the Sperry Rand Corporation.',
    category: 'history',
    entities: [grace, { ...sperry, name: 'Sperry Rand Corporation' }],
    relationships: [{ source: 'Grace Hopper', type: 'works_at', target: 'Sperry Rand Corporation' }],
  })

  // Recalling the person brings back the project and the organization attached to her.
  const recall = await ok(client, 'recall', { query: 'Grace Hopper' })
  const found = new Map(recall.entities.map((e: { name: string; type: string }) => [e.name, e.type]))
  expect(recall.entities[0].name).toBe('Grace Hopper')
  expect(found.get('COBOL')).toBe('project')
  expect(found.get('Sperry Rand Corporation')).toBe('organization')
  expect(recall.relationships.map((r: { type: string }) => r.type)).toEqual(expect.arrayContaining(['works_on', 'works_at']))

  // Edit: the slug survives a title change; the patch merges into the graph.
  const edited = await ok(client, 'update', { slug: first.slug, title: 'Hopper, COBOL and FLOW-MATIC', tags: ['languages'] })
  expect(edited.observation).toMatchObject({ slug: first.slug, title: 'Hopper, COBOL and FLOW-MATIC', tags: ['languages'] })
  expect((await ok(client, 'recall', { tags: ['languages'] })).observations.map((o: { slug: string }) => o.slug)).toEqual([first.slug])

  // A structured error comes back as isError with a code, and the session goes on.
  const bad = await call(client, 'write', { title: 'no content' })
  expect(bad.isError).toBe(true)
  expect(bad.body.error.code).toBe('invalid_request')

  // Consolidation proposes the variant names of the same company; accepting merges them.
  const proposals = await ok(client, 'consolidate')
  const merge = proposals.find((p: { names: string[] }) => p.names.includes('Sperry Rand') && p.names.includes('Sperry Rand Corporation'))
  expect(merge, JSON.stringify(proposals)).toBeTruthy()
  expect((await ok(client, 'accept_proposal', { id: merge.id, canonical: 'Sperry Rand' })).canonical).toBe('Sperry Rand')
  const merged = await ok(client, 'inspect_entity', { name: 'Sperry Rand Corporation' })
  expect(merged.entity.name).toBe('Sperry Rand')
  expect(merged.incoming.map((r: { source: string; type: string }) => `${r.source} ${r.type}`)).toEqual(['Grace Hopper works_at'])

  // Delete prunes what only that observation backed.
  const deleted = await ok(client, 'delete', { slug: third.slug })
  expect(deleted.slug).toBe(third.slug)
  expect((await call(client, 'get_observation', { slug: third.slug })).body.error.code).toBe('not_found')
  expect((await ok(client, 'recall', { category: 'history' })).observations).toHaveLength(2)
}
