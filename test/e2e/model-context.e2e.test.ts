// Where the page offers an in-page tool registry, the app registers the agent tools for the
// memory on screen; a tool call writes through the app's connection and errors come back
// structured. The registry here is a minimal stand-in installed before the app loads, since
// Debian's Chromium ships none.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Page } from 'playwright-core'
import { startHarness, type Harness } from './harness'
import { createMemory } from './ui'

declare global {
  interface Window {
    registeredTools?: Map<string, { execute(args: unknown): Promise<{ content: Array<{ text: string }>; isError?: boolean }> }>
  }
}

describe('in-page agent tools', () => {
  let harness: Harness
  let page: Page

  beforeAll(async () => {
    harness = await startHarness()
    await harness.device.context.addInitScript(() => {
      const tools = new Map()
      window.registeredTools = tools
      Object.defineProperty(navigator, 'modelContext', {
        value: { registerTool: (t: { name: string }) => tools.set(t.name, t), unregisterTool: (n: string) => tools.delete(n) },
      })
    })
    page = await harness.openApp('/')
  })
  afterAll(async () => {
    await harness?.close()
  })

  it('registers the tools while a memory is open, and a tool call writes to it', async () => {
    expect(await page.evaluate(() => window.registeredTools!.size)).toBe(0)
    await createMemory(page, 'Agent notes')
    await expect.poll(() => page.evaluate(() => [...window.registeredTools!.keys()].sort())).toContain('recall')

    const written = await page.evaluate(async () => {
      const r = await window.registeredTools!.get('write')!.execute({ title: 'Met Ines', content: 'Ines runs the lab.', entities: [{ name: 'Ines Duarte', type: 'person', description: 'Head of the genetics lab' }] })
      return { isError: r.isError ?? false, body: JSON.parse(r.content[0]!.text) }
    })
    expect(written.isError).toBe(false)
    expect(typeof written.body.slug).toBe('string')

    const bad = await page.evaluate(async () => {
      const r = await window.registeredTools!.get('write')!.execute({ title: 'No description', content: 'x', entities: [{ name: 'Nobody' }] })
      return { isError: r.isError ?? false, body: JSON.parse(r.content[0]!.text) }
    })
    expect(bad.isError).toBe(true)
    // a new entity without a description: the memory refuses the write and names it
    expect(bad.body.error.code).toBe('invalid_write')
    expect(bad.body.error.details.entitiesWithoutDescription).toEqual(['Nobody'])

    // the write is there for the person too
    await page.getByRole('link', { name: 'Recall', exact: true }).click()
    await page.getByLabel('Query').fill('genetics lab')
    await page.getByRole('button', { name: 'Recall', exact: true }).click()
    await page.getByTestId('recall-result').waitFor()
    expect(await page.getByTestId('recalled-entities').locator('li strong').allTextContents()).toContain('Ines Duarte')

    await page.getByRole('link', { name: 'All memories' }).click()
    await expect.poll(() => page.evaluate(() => window.registeredTools!.size)).toBe(0)
  })

  it('left no page errors', () => {
    expect(harness.pageErrors).toEqual([])
  })
})
