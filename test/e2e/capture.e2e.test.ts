// Capture from text, as a person does it with the keyboard on a desktop and on a phone: links
// from `[[Name]]` with autocomplete over every name, known names offered from the text, a new
// entity described by its sentence and typed as names like it (both editable inline, nothing to
// type), relationships offered between linked entities, the confirmation on screen, and every
// problem at its field.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Page } from 'playwright-core'
import { startHarness, type Harness } from './harness'
import { installToolRegistry, seed } from './seed'
import { createMemory } from './ui'

const VIEWPORTS = [
  { name: 'desktop', width: 1280, height: 800 },
  { name: 'phone', width: 390, height: 844 },
] as const

/** True when the element's box lies inside the viewport, so it is seen without scrolling. */
async function onScreen(page: Page, selector: string): Promise<boolean> {
  return page.locator(selector).first().evaluate((el) => {
    const r = el.getBoundingClientRect()
    return r.height > 0 && r.top >= 0 && r.bottom <= window.innerHeight && r.left >= 0 && r.right <= window.innerWidth
  })
}

const note = (page: Page) => page.getByLabel('Note', { exact: true })

describe.each(VIEWPORTS)('capture from text at $width x $height', ({ name, width, height }) => {
  let harness: Harness
  let page: Page

  beforeAll(async () => {
    harness = await startHarness()
    await installToolRegistry(harness.device.context)
    page = await harness.openApp('/')
    await page.setViewportSize({ width, height })
    await createMemory(page, `Capture ${name}`)
    // 150 people so autocomplete has to reach past the first hundred names
    await seed(page, [
      {
        title: 'Staff list',
        content: 'The clinic staff.',
        entities: Array.from({ length: 40 }, (_, i) => ({ name: `Staffer ${String(i).padStart(3, '0')}`, type: 'person', description: `member of staff number ${i}` })),
      },
      ...Array.from({ length: 3 }, (_, b) => ({
        title: `Visitors ${b}`,
        content: 'Visitors of the week.',
        entities: Array.from({ length: 40 }, (_, i) => ({ name: `Visitor ${String(b * 40 + i).padStart(3, '0')}`, type: 'person', description: `visitor number ${b * 40 + i}` })),
      })),
      {
        title: 'Amara at the clinic',
        content: 'Amara Okafor works at the Harbor Clinic.',
        entities: [
          { name: 'Amara Okafor', type: 'person', description: 'cardiologist at the harbor clinic' },
          { name: 'Harbor Clinic', type: 'organization', description: 'walk-in clinic by the harbor' },
        ],
        relationships: [{ source: 'Amara Okafor', type: 'works at', target: 'Harbor Clinic' }],
      },
    ])
    await page.reload()
    await page.waitForSelector('html[data-ready="true"]')
    await page.getByRole('heading', { name: 'Capture an observation' }).waitFor()
  })
  afterAll(async () => {
    await harness?.close()
  })

  it('starts in the note, offers known names from the text, and links them with Alt+L', async () => {
    await expect.poll(() => note(page).evaluate((el) => el === document.activeElement)).toBe(true)
    await page.keyboard.type('Amara Okafor met Tomas Berg at the harbor clinic about the night rota.')
    const offers = page.getByTestId('link-offers')
    await offers.getByRole('button', { name: 'Link Amara Okafor' }).waitFor()
    await offers.getByRole('button', { name: 'Link Harbor Clinic' }).waitFor()
    // a capitalized phrase that names nothing known is offered as a new entity
    await offers.getByRole('button', { name: 'Link Tomas Berg as a new entity' }).waitFor()
    await page.keyboard.press('Alt+l')
    const linked = page.getByTestId('linked-entity')
    await expect.poll(() => linked.count()).toBe(2)
    // known entities ask for nothing
    expect(await page.getByTestId('linked-entities').locator('input').count()).toBe(0)
    expect(await page.getByTestId('linked-entities').textContent()).toContain('already in this memory')
    await harness.screenshot(page, `capture-${name}-offers`)
  })

  it('links a new name from its offer, asks its type and description inline, and offers relationships with used types first', async () => {
    await page.getByTestId('link-offers').getByRole('button', { name: 'Link Tomas Berg as a new entity' }).click()
    await page.getByLabel('Type of Tomas Berg').fill('person')
    await page.getByLabel('Description of Tomas Berg').fill('night nurse who plans the rota')
    const offers = page.getByTestId('relationship-offer')
    await expect.poll(() => offers.count()).toBeGreaterThanOrEqual(2)
    const types = await page.locator('#capture-relationship-types option').evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value))
    expect(types[0]).toBe('works at')
    await page.getByLabel('Relationship from Amara Okafor to Tomas Berg').fill('works with')
    await page.getByLabel('Relationship from Tomas Berg to Harbor Clinic').fill('works at')
    await note(page).press('Control+Enter')
    const saved = page.getByTestId('write-result')
    await saved.waitFor()
    expect(await saved.textContent()).toContain('Amara Okafor met Tomas Berg at the harbor clinic about the night rota')
    expect(await onScreen(page, '[data-testid="write-result"]')).toBe(true)
    expect(await note(page).inputValue()).toBe('')
    await expect.poll(() => note(page).evaluate((el) => el === document.activeElement)).toBe(true)
    await harness.screenshot(page, `capture-${name}-saved`)

    // what was written: the new entity with its description, the known ones unchanged
    await page.getByTestId('write-result').getByRole('link').first().click()
    const observation = page.getByTestId('observation')
    await observation.waitFor()
    const text = (await observation.textContent()) ?? ''
    expect(text).toContain('Tomas Berg')
    expect(text).toContain('night nurse who plans the rota')
    // a known entity is named, not described again: the note does not repeat its description
    expect(text).not.toContain('cardiologist at the harbor clinic')
    expect(text).toMatch(/Amara Okafor\s*works with\s*Tomas Berg/)
    expect(text).toMatch(/Tomas Berg\s*works at\s*Harbor Clinic/)
  })

  it('completes [[ over every name, past the first hundred', async () => {
    await page.getByRole('link', { name: 'Capture', exact: true }).click()
    await note(page).focus()
    await page.keyboard.type('Called [[Visitor 11')
    const options = page.getByRole('listbox', { name: 'Link to' }).getByRole('option')
    await expect.poll(() => options.first().textContent()).toContain('Visitor 110')
    await page.keyboard.press('ArrowDown')
    await page.keyboard.press('Enter')
    expect(await note(page).inputValue()).toBe('Called [[Visitor 111]]')
    await page.keyboard.type(' about [[Ama')
    await expect.poll(() => options.first().textContent()).toContain('Amara Okafor')
    await harness.screenshot(page, `capture-${name}-autocomplete`)
    await page.keyboard.press('Tab')
    expect(await note(page).inputValue()).toBe('Called [[Visitor 111]] about [[Amara Okafor]]')
    // both are known: linked at once, nothing asked
    await expect.poll(() => page.getByTestId('linked-entity').count()).toBe(2)
    expect(await page.getByTestId('linked-entities').locator('input').count()).toBe(0)
    await page.keyboard.press('Control+Enter')
    await page.getByTestId('write-result').waitFor()
    expect(await page.getByTestId('write-result').textContent()).toContain('Called Visitor 111 about Amara Okafor')
  })

  it('puts every problem at its field in plain words, all at once, and saves nothing', async () => {
    await note(page).fill('Planning with [[Ines Duarte]] and [[Leo Brandt]] for winter.')
    // a description is never missing (the sentence is proposed); a type too long is refused
    for (const who of ['Ines Duarte', 'Leo Brandt']) await page.getByLabel(`Type of ${who}`).fill('a'.repeat(70))
    await note(page).press('Control+Enter')
    const problems = page.getByTestId('write-problems')
    await problems.waitFor()
    expect(await problems.textContent()).toContain('2 things need fixing')
    for (const who of ['Ines Duarte', 'Leo Brandt']) {
      const field = page.getByLabel(`Type of ${who}`)
      expect(await field.getAttribute('aria-invalid')).toBe('true')
      const hint = await field.getAttribute('aria-describedby')
      expect(await page.locator(`#${hint}`).textContent()).toContain('the limit is 64')
    }
    expect(await problems.textContent()).not.toContain('entities[')
    await harness.screenshot(page, `capture-${name}-problems`)
    // nothing was written: fixing both saves the note once
    await page.getByLabel('Type of Ines Duarte').fill('person')
    await page.getByLabel('Type of Leo Brandt').fill('person')
    await note(page).press('Control+Enter')
    await page.getByTestId('write-result').waitFor()
    await expect.poll(() => page.getByTestId('write-problems').count()).toBe(0)
  })

  it('keeps the full form for precise edits', async () => {
    await page.locator('details.more summary').click()
    await page.getByLabel('Category').fill('meeting')
    const row = page.getByTestId('entity-row').first()
    await row.getByLabel('Name').fill('Harbor Clinic')
    await row.getByLabel('Type').fill('organization')
    await row.getByLabel('Description (required)').fill('walk-in clinic by the harbor, open at night')
    await note(page).fill('The clinic now opens at night.')
    await note(page).press('Control+Enter')
    // the confirmation of the note before is still there until this one replaces it
    await expect.poll(() => page.getByTestId('write-result').textContent()).toContain('The clinic now opens at night')
    expect(await page.getByTestId('write-result').textContent()).toContain('Harbor Clinic')
  })

  it('a note naming four new names and two known ones saves with nothing typed beyond the text', async () => {
    const text = 'Met [[Maria Chen]] from [[Acme Clinic]] with Amara Okafor today. She leads the [[Atlas Migration]] and wants [[Bob Smith]] to review the Harbor Clinic design.'
    await note(page).focus()
    await page.keyboard.type(text)
    await page.keyboard.press('Alt+l')
    await expect.poll(() => page.getByTestId('linked-entity').count()).toBe(6)
    // each new name shows its proposed description, its sentence, in a field that can be edited
    expect(await page.getByLabel('Description of Maria Chen').inputValue()).toBe('Met Maria Chen from Acme Clinic with Amara Okafor today.')
    expect(await page.getByLabel('Description of Bob Smith').inputValue()).toBe('She leads the Atlas Migration and wants Bob Smith to review the Harbor Clinic design.')
    // one is edited inline: Tab reaches it from the note, typing replaces the proposal
    await page.getByLabel('Description of Acme Clinic').focus()
    await page.keyboard.type('supplier of the clinic software')
    await harness.screenshot(page, `capture-${name}-proposals`)
    await page.keyboard.press('Control+Enter')
    // the previous test's confirmation is on screen until this note's replaces it
    await expect.poll(() => page.getByTestId('write-result').textContent()).toContain('Maria Chen')
    await expect.poll(() => page.getByTestId('write-problems').count()).toBe(0)
    const inspect = async (n: string) => {
      const body = (await page.evaluate(async (who) => JSON.parse((await window.seedTools!.get('inspect_entity')!.execute({ name: who })).content[0]!.text), n)) as { entity?: { type: string; description: string } }
      if (!body.entity) throw new Error(`inspect_entity ${n}: ${JSON.stringify(body)}`)
      return body as { entity: { type: string; description: string } }
    }
    expect((await inspect('Maria Chen')).entity.description).toBe('Met Maria Chen from Acme Clinic with Amara Okafor today.')
    expect((await inspect('Acme Clinic')).entity.description).toBe('supplier of the clinic software')
    // a name like a known organization's is typed as one; a name like nothing known is left to the default
    expect((await inspect('Acme Clinic')).entity.type).toBe('organization')
    expect((await inspect('Bob Smith')).entity.type).toBe('thing')
  })

  it('logs no page errors', () => {
    expect(harness.pageErrors).toEqual([])
  })
})
