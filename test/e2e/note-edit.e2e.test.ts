// A note edited where it is read, with the capture editor and the keyboard alone: its text, a new
// link and relationship, saved with Ctrl+Enter (Escape leaves it as it was); and capture's
// "replaces …" offer for a single-valued relationship, which supersedes the old note when taken.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Page } from 'playwright-core'
import { startHarness, type Harness } from './harness'
import { installToolRegistry, seed } from './seed'
import { openMemoryMenu, openMemorySettings } from './ui'

/** Calls one of the app's tools (the in-page registry the seed installs) and returns its answer. */
async function tool<T>(page: Page, name: string, args: unknown): Promise<T> {
  return page.evaluate(
    async ([n, a]) => {
      const r = await window.seedTools!.get(n as string)!.execute(a)
      if (r.isError) throw new Error(r.content[0]!.text)
      return JSON.parse(r.content[0]!.text)
    },
    [name, args] as const,
  ) as Promise<T>
}

const focused = (page: Page): Promise<string> => page.evaluate(() => document.activeElement?.getAttribute('aria-label') ?? document.activeElement?.id ?? '')

describe('a note edited in place, and a fact replaced from capture', () => {
  let harness: Harness
  let page: Page
  let memoryId = ''
  let danaAtAcme = ''
  let globexSlug = ''

  beforeAll(async () => {
    harness = await startHarness()
    await installToolRegistry(harness.device.context)
    page = await harness.openApp('/')
    await page.getByLabel('Name', { exact: true }).fill('Edits')
    await openMemorySettings(page)
    await page.getByLabel('Words only (BM25, no model)').check()
    await page.getByRole('button', { name: 'Create memory' }).click()
    await page.getByRole('heading', { name: 'Capture an observation' }).waitFor()
    memoryId = decodeURIComponent(/#\/m\/([^/]+)/.exec(page.url())![1]!)
    const slugs = await seed(page, [
      {
        title: 'Dana joins Acme',
        content: 'Dana Whitfield started at Acme as a staff engineer.',
        validFrom: '2024-01-01',
        entities: [
          { name: 'Dana Whitfield', type: 'person', description: 'staff engineer' },
          { name: 'Acme', type: 'organization', description: 'maker of anvils' },
        ],
        relationships: [{ source: 'Dana Whitfield', type: 'works_at', target: 'Acme' }],
      },
      {
        title: 'Organizations nearby',
        content: 'Globex and the Harbor Clinic are on the same street.',
        entities: [
          { name: 'Globex', type: 'organization', description: 'maker of everything' },
          { name: 'Harbor Clinic', type: 'organization', description: 'walk-in clinic by the harbor' },
        ],
      },
    ])
    danaAtAcme = slugs[0]!
    // the memory declares that a person works at one place at a time
    await openMemoryMenu(page)
    await page.getByLabel('One target at a time (comma separated)').fill('works at')
    await page.getByTestId('single-valued-panel').getByRole('button', { name: 'Save' }).click()
    await page.getByTestId('single-valued-result').waitFor()
    expect(await page.getByTestId('single-valued-result').textContent()).toContain('works at')
    await page.locator('details.memory-menu summary').click()
  })
  afterAll(async () => {
    await harness?.close()
  })

  it('edits the text and adds a link with the capture editor, keyboard only; Escape cancels and Ctrl+Enter saves', async () => {
    await page.evaluate(([m, s]) => (location.hash = `#/m/${encodeURIComponent(m)}/observation/${encodeURIComponent(s)}`), [memoryId, danaAtAcme] as const)
    const view = page.getByTestId('observation')
    await view.waitFor()
    await view.getByRole('button', { name: 'Edit' }).focus()
    await page.keyboard.press('Enter')
    const editor = page.getByTestId('note-editor')
    await editor.waitFor()
    // the capture editor, not the raw form: no empty description boxes, the note's links and relationship shown
    expect(await editor.getByLabel('Description (required)').count()).toBe(0)
    await expect.poll(() => focused(page)).toBe('capture-note')
    expect(await editor.getByTestId('linked-entity').allTextContents()).toEqual([expect.stringContaining('Dana Whitfield'), expect.stringContaining('Acme')])
    expect(await editor.getByLabel('Relationship from Dana Whitfield to Acme').inputValue()).toBe('works at')

    // Escape leaves the note as it was
    await page.keyboard.press('Control+End')
    await page.keyboard.type(' Not saved.')
    await page.keyboard.press('Escape')
    await view.waitFor()
    expect(await view.locator('.content').textContent()).toBe('Dana Whitfield started at Acme as a staff engineer.')
    await expect.poll(() => view.getByRole('button', { name: 'Edit' }).evaluate((el) => el === document.activeElement)).toBe(true)

    await page.keyboard.press('Enter')
    await editor.waitFor()
    await expect.poll(() => focused(page)).toBe('capture-note')
    await page.keyboard.press('Control+End')
    await page.keyboard.type(' Dana Whitfield also advises [[Harb')
    await page.getByRole('option', { name: /Harbor Clinic/ }).first().waitFor()
    await page.keyboard.press('Enter')
    await page.keyboard.type(' on rotas.')
    await expect.poll(() => editor.getByTestId('linked-entity').count()).toBe(3)
    // the new relationship, typed from the keyboard: Tab from the note reaches the offers in order
    const newPair = editor.getByLabel('Relationship from Dana Whitfield to Harbor Clinic')
    await newPair.waitFor()
    for (let i = 0; i < 30 && !(await newPair.evaluate((el) => el === document.activeElement)); i++) await page.keyboard.press('Tab')
    expect(await newPair.evaluate((el) => el === document.activeElement)).toBe(true)
    await page.keyboard.type('advises')
    await harness.screenshot(page, 'note-edit-editor')
    await page.keyboard.press('Control+Enter')

    await view.waitFor()
    expect(await view.locator('.content').textContent()).toBe('Dana Whitfield started at Acme as a staff engineer. Dana Whitfield also advises Harbor Clinic on rotas.')
    const text = (await view.textContent())!.replace(/\s+/g, ' ')
    expect(text).toContain('Dana Whitfield works at Acme')
    expect(text).toContain('Dana Whitfield advises Harbor Clinic')
    // linking a known name describes nothing, so nothing asks for a review
    expect(await page.getByTestId('review-hints').count()).toBe(0)
    // what the note already said is kept: descriptions are not blanked by the edit
    expect(text).toContain('Acme organization — maker of anvils')
    const stored = await tool<{ content: string; entities: Array<{ name: string; description: string }>; relationships: Array<{ type: string; target: string }> }>(page, 'get_observation', { slug: danaAtAcme })
    expect(stored.entities.map((e) => e.name).sort()).toEqual(['Acme', 'Dana Whitfield', 'Harbor Clinic'])
    expect(stored.entities.find((e) => e.name === 'Dana Whitfield')!.description).toBe('staff engineer')
    expect(stored.relationships.map((r) => `${r.type} ${r.target}`).sort()).toEqual(['advises Harbor Clinic', 'works_at Acme'])
    await harness.screenshot(page, 'note-edit-saved')
  })

  it('offers "replaces" for a new target of a single-valued relationship, and the old note is superseded when taken', async () => {
    await page.getByRole('link', { name: 'Capture' }).click()
    const note = page.getByLabel('Note', { exact: true })
    await expect.poll(() => note.evaluate((el) => el === document.activeElement)).toBe(true)
    await page.keyboard.type('Dana Whitfield moved to Globex in March.')
    await page.keyboard.press('Alt+l')
    await expect.poll(() => page.getByTestId('linked-entity').count()).toBe(2)
    const pair = page.getByLabel('Relationship from Dana Whitfield to Globex')
    for (let i = 0; i < 20 && !(await pair.evaluate((el) => el === document.activeElement)); i++) await page.keyboard.press('Tab')
    await page.keyboard.type('works at')
    const offers = page.getByTestId('replaces-offers')
    await offers.waitFor()
    const offer = offers.getByRole('checkbox', { name: /replaces: “Dana joins Acme”/ })
    expect(await offers.textContent()).toContain('Dana Whitfield works at Acme, now Globex')
    for (let i = 0; i < 5 && !(await offer.evaluate((el) => el === document.activeElement)); i++) await page.keyboard.press('Tab')
    expect(await offer.evaluate((el) => el === document.activeElement)).toBe(true)
    await page.keyboard.press('Space')
    expect(await offer.isChecked()).toBe(true)
    await harness.screenshot(page, 'note-edit-replaces-offer')
    await page.keyboard.press('Control+Enter')
    await page.getByTestId('replaced-note').waitFor()
    const slug = (await page.getByTestId('written-slug').textContent())!
    globexSlug = slug

    const written = await tool<{ supersedes?: string[] }>(page, 'get_observation', { slug })
    expect(written.supersedes).toEqual([danaAtAcme])
    const dana = await tool<{ history: Array<{ slug: string; supersededBy?: string[]; current: boolean }> }>(page, 'inspect_entity', { name: 'Dana Whitfield' })
    const old = dana.history.find((h) => h.slug === danaAtAcme)!
    expect(old.supersededBy).toEqual([slug])
    expect(old.current).toBe(false)
    // a capture that names no single-valued relationship offers nothing
    await page.keyboard.type('Dana Whitfield visited Acme.')
    await page.keyboard.press('Alt+l')
    await expect.poll(() => page.getByTestId('linked-entity').count()).toBe(2)
    expect(await page.getByTestId('replaces-offers').count()).toBe(0)
    await harness.screenshot(page, 'note-edit-replaced')
    expect(harness.pageErrors).toEqual([])
  })

  it('edits when a note held, from the keyboard', async () => {
    await page.evaluate(([m, s]) => (location.hash = `#/m/${encodeURIComponent(m)}/observation/${encodeURIComponent(s)}`), [memoryId, globexSlug] as const)
    const view = page.getByTestId('observation')
    await view.waitFor()
    await view.getByRole('button', { name: 'Edit' }).focus()
    await page.keyboard.press('Enter')
    await page.getByTestId('note-editor').waitFor()
    await expect.poll(() => focused(page)).toBe('capture-note')
    // the day it started to hold, typed into the date field as Chromium's en-US field takes it
    await page.getByLabel('Held from').focus()
    await page.keyboard.type('03012026')
    expect(await page.getByLabel('Held from').inputValue()).toBe('2026-03-01')
    await page.keyboard.press('Control+Enter')
    await view.waitFor()
    const stored = await tool<{ validFrom?: string; supersedes?: string[] }>(page, 'get_observation', { slug: globexSlug })
    expect(stored.validFrom?.slice(0, 10)).toBe('2026-03-01')
    // the edit keeps what the note replaces
    expect(stored.supersedes).toEqual([danaAtAcme])
    expect(harness.pageErrors).toEqual([])
  })
})
