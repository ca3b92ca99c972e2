// Filling a memory quickly for browser tests: writes go through the app's own connection by way
// of the in-page tool registry, installed as a minimal stand-in before the app loads.
import type { BrowserContext, Page } from 'playwright-core'
import type { ObservationInput } from '../../src/core/types'

declare global {
  interface Window {
    seedTools?: Map<string, { execute(args: unknown): Promise<{ content: Array<{ text: string }>; isError?: boolean }> }>
  }
}

export async function installToolRegistry(context: BrowserContext): Promise<void> {
  await context.addInitScript(() => {
    const tools = new Map()
    window.seedTools = tools
    Object.defineProperty(navigator, 'modelContext', {
      value: { registerTool: (t: { name: string }) => tools.set(t.name, t), unregisterTool: (n: string) => tools.delete(n) },
    })
  })
}

/** Writes each observation into the memory on screen; returns their slugs. */
export async function seed(page: Page, observations: ObservationInput[]): Promise<string[]> {
  await page.waitForFunction(() => window.seedTools?.has('write'))
  return page.evaluate(async (list) => {
    const slugs: string[] = []
    for (const o of list) {
      const r = await window.seedTools!.get('write')!.execute(o)
      const body = JSON.parse(r.content[0]!.text)
      if (r.isError) throw new Error(JSON.stringify(body))
      slugs.push(body.slug)
    }
    return slugs
  }, observations)
}
