// With a memory open, the app offers the agent tools on the browser's own tool registry
// (WebMCP, `document.modelContext` in Chromium launched with the WebMCP feature): an agent lists
// them, a tool call writes and recalls through the app's connection, a bad write comes back as
// the same structured error as over MCP, and leaving the memory withdraws them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Page } from 'playwright-core'
import { startHarness, type Harness } from './harness'
import { createMemory } from './ui'

/** What an agent in the page sees of the tools, read from the registry itself. */
function listedTools(page: Page): Promise<Array<{ name: string; title: string; readOnly: boolean; schemaType: unknown }>> {
  return page.evaluate(async () => {
    const tools = (await document.modelContext.getTools()) as Array<{ name: string; title?: string; inputSchema?: { type?: unknown }; annotations?: { readOnlyHint?: boolean } }>
    return tools
      .map((t) => ({ name: t.name, title: t.title ?? '', readOnly: t.annotations?.readOnlyHint ?? false, schemaType: t.inputSchema?.type }))
      .sort((a, b) => a.name.localeCompare(b.name))
  })
}

/** Calls a tool the way an agent in the page does; the registry answers with the result as JSON text. */
function callTool(page: Page, name: string, args: Record<string, unknown>): Promise<{ isError: boolean; body: Record<string, any> }> {
  return page.evaluate(
    async ([name, args]) => {
      const mc = document.modelContext
      const tool = (await mc.getTools()).find((t: { name: string }) => t.name === name)
      if (!tool) throw new Error(`no tool ${name}`)
      const result = JSON.parse(await mc.executeTool(tool, args)) as { content: Array<{ text: string }>; isError?: boolean }
      return { isError: result.isError ?? false, body: JSON.parse(result.content[0]!.text) }
    },
    [name, args] as const,
  )
}

declare global {
  interface Document {
    // WebMCP as Chromium ships it behind --enable-blink-features=WebMCP
    readonly modelContext: { getTools(): Promise<any[]>; executeTool(tool: unknown, args: unknown): Promise<string> }
  }
}

describe('in-page agent tools on the browser registry', () => {
  let harness: Harness
  let page: Page
  const warnings: string[] = []

  beforeAll(async () => {
    harness = await startHarness({ chromiumArgs: ['--enable-blink-features=WebMCP'] })
    page = await harness.openApp('/')
    page.on('console', (m) => {
      if (m.type() === 'warning') warnings.push(m.text())
    })
  })
  afterAll(async () => {
    await harness?.close()
  })

  it('lists every tool while a memory is open; calls write and recall through the app, errors as over MCP; leaving withdraws them', async () => {
    expect(await page.evaluate(() => typeof document.modelContext?.getTools)).toBe('function')
    expect(await listedTools(page)).toEqual([])

    const memoryId = await createMemory(page, 'Agent notes')
    const { toolListing } = await import('../../src/tools/definitions')
    const every = toolListing().map((t) => t.name).sort()
    await expect.poll(async () => (await listedTools(page)).map((t) => t.name)).toEqual(every)
    const listed = await listedTools(page)
    expect(listed.every((t) => t.schemaType === 'object' && t.title.length > 0)).toBe(true)
    expect(listed.find((t) => t.name === 'recall')?.readOnly).toBe(true)
    expect(listed.find((t) => t.name === 'write')?.readOnly).toBe(false)

    const written = await callTool(page, 'write', {
      title: 'Met Ines',
      content: 'Ines runs the lab.',
      entities: [{ name: 'Ines Duarte', type: 'person', description: 'Head of the genetics lab' }],
    })
    expect(written.isError).toBe(false)
    expect(typeof written.body.slug).toBe('string')

    const recalled = await callTool(page, 'recall', { query: 'genetics lab' })
    expect(recalled.isError).toBe(false)
    expect(recalled.body.entities.map((e: { name: string }) => e.name)).toContain('Ines Duarte')

    // a new entity without a description: the memory refuses the write and names it, under the
    // code and details an MCP client gets
    const bad = await callTool(page, 'write', { title: 'No description', content: 'x', entities: [{ name: 'Nobody' }] })
    expect(bad.isError).toBe(true)
    expect(bad.body.error.code).toBe('invalid_write')
    expect(bad.body.error.details.entitiesWithoutDescription).toEqual(['Nobody'])
    // arguments of the wrong shape are refused by the tool's schema, as over MCP
    const malformed = await callTool(page, 'recall', { query: 42 })
    expect(malformed.isError).toBe(true)
    expect(malformed.body.error.code).toBe('invalid_request')

    // the write is there for the person too
    await page.getByRole('link', { name: 'Recall', exact: true }).click()
    await page.getByLabel('Query').fill('genetics lab')
    await page.getByRole('button', { name: 'Recall', exact: true }).click()
    await page.getByTestId('recall-result').waitFor()
    expect(await page.getByTestId('recalled-entities').locator('li strong').allTextContents()).toContain('Ines Duarte')

    await page.getByRole('link', { name: 'All memories' }).click()
    await expect.poll(async () => (await listedTools(page)).length).toBe(0)

    // opening the memory again offers them again, with no duplicate-name refusal
    await page.evaluate((id) => (location.hash = `#/m/${encodeURIComponent(id)}`), memoryId)
    await expect.poll(async () => (await listedTools(page)).map((t) => t.name)).toEqual(every)
    const again = await callTool(page, 'recall', { query: 'Ines' })
    expect(again.body.entities.map((e: { name: string }) => e.name)).toContain('Ines Duarte')
  })

  it('left no page errors or warnings about refused tools', () => {
    expect(harness.pageErrors).toEqual([])
    expect(warnings.filter((w) => w.includes('could not offer'))).toEqual([])
  })
})
