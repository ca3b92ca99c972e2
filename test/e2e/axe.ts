// axe-core in a browser test: its serious and critical findings on the page as it is now.
import { readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { expect } from 'vitest'
import type { Page } from 'playwright-core'

/** axe-core's source, to add to a page. */
export function readAxe(): Promise<string> {
  return readFile(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8')
}

interface Violation {
  id: string
  impact: string | null
  help: string
  nodes: Array<{ target: string[] }>
}

/** axe-core's serious and critical findings on the page as it is now, as readable lines. */
export async function serious(page: Page, axeSource: string): Promise<string[]> {
  if (!(await page.evaluate(() => 'axe' in window))) await page.addScriptTag({ content: axeSource })
  const { violations, rulesPassed } = (await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run: (ctx: Document, opts: object) => Promise<{ violations: unknown[]; passes: unknown[] }> } }).axe
    const r = await axe.run(document, { resultTypes: ['violations'] })
    return { violations: r.violations, rulesPassed: r.passes.length }
  })) as { violations: Violation[]; rulesPassed: number }
  // a page axe could not read would pass nothing rather than fail
  expect(rulesPassed).toBeGreaterThan(5)
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(', ')}`)
}

