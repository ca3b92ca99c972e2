// What a person does in the app, step by step, shared by the browser tests.
import { expect } from 'vitest'
import type { Page } from 'playwright-core'

export interface EntityFields {
  name: string
  type: string
  description: string
}

/** Opens the capture form's full entity and relationship form (it is folded under "More fields"). */
export async function openFullForm(page: Page): Promise<void> {
  const more = page.locator('details.more')
  if (!(await more.evaluate((el) => (el as HTMLDetailsElement).open))) await more.locator('summary').click()
}

export async function fillEntity(page: Page, index: number, e: EntityFields): Promise<void> {
  await openFullForm(page)
  const rows = page.getByTestId('entity-row')
  if ((await rows.count()) <= index) await page.getByRole('button', { name: 'Add entity' }).click()
  const row = rows.nth(index)
  await row.getByLabel('Name').fill(e.name)
  await row.getByLabel('Type').fill(e.type)
  await row.getByLabel('Description (required)').fill(e.description)
}

export async function fillRelationship(page: Page, source: string, type: string, target: string): Promise<void> {
  await openFullForm(page)
  const row = page.getByTestId('relationship-row').first()
  await row.getByLabel('Source').fill(source)
  await row.getByLabel('Type').fill(type)
  await row.getByLabel('Target').fill(target)
}

/** Fills the capture form's full form and saves with Ctrl+Enter; returns the slug the confirmation shows. */
export async function capture(page: Page, title: string, content: string, entities: EntityFields[], rel?: [string, string, string]): Promise<string> {
  await page.getByRole('link', { name: 'Capture' }).click()
  await page.getByLabel('Title').fill(title)
  await page.getByLabel('Note', { exact: true }).fill(content)
  for (const [i, e] of entities.entries()) await fillEntity(page, i, e)
  if (rel) await fillRelationship(page, ...rel)
  await page.getByLabel('Title').press('Control+Enter')
  const slug = page.getByTestId('written-slug')
  await slug.waitFor()
  // the form resets after a successful write
  await expect.poll(() => page.getByLabel('Title').inputValue()).toBe('')
  return (await slug.textContent()) ?? ''
}

export async function recall(page: Page, query: string): Promise<string[]> {
  await page.getByRole('link', { name: 'Recall', exact: true }).click()
  await page.getByLabel('Query', { exact: true }).fill(query)
  await page.getByRole('button', { name: 'Recall', exact: true }).click()
  await page.getByTestId('recall-result').waitFor()
  return page.getByTestId('recalled-entities').locator('li strong').allTextContents()
}

/** Opens the new memory form's folded settings (visibility and retrieval), shut until asked for. */
export async function openMemorySettings(page: Page): Promise<void> {
  const fold = page.locator('details.advanced')
  if (!(await fold.evaluate((el) => (el as HTMLDetailsElement).open))) await fold.locator('summary').click()
}

/** Creates a memory from the memory list and waits for its capture screen; returns the memory's id. */
export async function createMemory(page: Page, name: string): Promise<string> {
  await page.getByLabel('Name', { exact: true }).fill(name)
  await page.getByRole('button', { name: 'Create memory' }).click()
  await page.getByRole('heading', { name: 'Capture an observation' }).waitFor()
  return decodeURIComponent(/#\/m\/([^/]+)/.exec(page.url())![1]!)
}

/** Opens the memory menu of the header, where sync, another device and export live. */
export async function openMemoryMenu(page: Page): Promise<void> {
  const menu = page.locator('details.memory-menu')
  if (!(await menu.evaluate((el) => (el as HTMLDetailsElement).open))) await menu.locator('summary').click()
}

/** Connects the memory on screen to a sync server from its sync panel and waits until it is synced. */
export async function connectToServer(page: Page, serverUrl: string, token: string): Promise<void> {
  await openMemoryMenu(page)
  await page.getByRole('button', { name: 'Sync with a server' }).click()
  await page.getByLabel('Server', { exact: true }).fill(serverUrl)
  await page.getByLabel('Token').fill(token)
  await page.getByRole('button', { name: 'Connect' }).click()
  await expect.poll(() => page.getByTestId('sync-state').textContent(), { timeout: 10_000 }).toBe('Synced')
}

/** Joins a memory on this device from the memory list's join form and starts syncing it. */
export async function joinMemory(page: Page, join: { id: string; shownAs: string; serverUrl: string; token: string }): Promise<void> {
  await page.getByLabel('Memory id').fill(join.id)
  await page.getByLabel('Shown as').fill(join.shownAs)
  await page.getByLabel('Sync server').fill(join.serverUrl)
  await page.getByLabel('Token').fill(join.token)
  await page.getByRole('button', { name: 'Join and sync' }).click()
}
