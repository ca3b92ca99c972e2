// Capture cost, measured on the built app in headless Chromium: a scripted person captures the
// same 10 notes (3 entities each, 2 already in the memory, 2 relationships) with the keyboard
// alone, once from the text and once through the full form, counting fields touched and
// keystrokes (every character, Tab, Enter and shortcut). Then 5 notes naming 4 new names and 2
// known ones, taking the proposed descriptions and types: fields beyond the note's text. Then
// recall: for each query, is the first entity and its first note on screen without scrolling,
// at 1280x800 and 390x844?
// Alone: `npx tsx test/bench/capture-alone.ts`.
import { existsSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { chromium, type BrowserContext, type Page } from 'playwright-core'
import { build, preview, type PreviewServer } from 'vite'
import { normalizeType } from '../../src/core/normalize'
import { installToolRegistry, seed } from '../e2e/seed'

const root = fileURLToPath(new URL('../..', import.meta.url))
const CHROMIUM_PATH = '/usr/bin/chromium'
const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic']
/** Fields per note of the old capture form for such a note, as counted when it was the only way. */
export const FIELDS_BEFORE = 18

interface NoteScript {
  text: string
  fresh: { name: string; type: string; description: string }
  known: [string, string]
  relationships: Array<[string, string, string]>
}

const KNOWN: Array<{ name: string; type: string; description: string }> = [
  { name: 'Amara Okafor', type: 'person', description: 'cardiologist at the harbor clinic' },
  { name: 'Tomas Berg', type: 'person', description: 'night nurse who plans the rota' },
  { name: 'Ines Duarte', type: 'person', description: 'pharmacist who runs the dispensary' },
  { name: 'Leo Brandt', type: 'person', description: 'volunteer ambulance driver' },
  { name: 'Mina Sato', type: 'person', description: 'physiotherapist for the rowing club' },
  { name: 'Harbor Clinic', type: 'organization', description: 'walk-in clinic by the harbor' },
  { name: 'City Hospital', type: 'organization', description: 'teaching hospital in the city centre' },
  { name: 'Rowing Club', type: 'organization', description: 'amateur rowing club on the lake' },
]

const NOTES: NoteScript[] = [
  { text: 'Amara Okafor asked Tomas Berg to cover the [[Night Rota]] in December.', known: ['Amara Okafor', 'Tomas Berg'], fresh: { name: 'Night Rota', type: 'schedule', description: 'night shift schedule of the ward' }, relationships: [['Amara Okafor', 'works with', 'Tomas Berg'], ['Tomas Berg', 'covers', 'Night Rota']] },
  { text: 'Ines Duarte ordered [[Warfarin Stock]] for the Harbor Clinic dispensary.', known: ['Ines Duarte', 'Harbor Clinic'], fresh: { name: 'Warfarin Stock', type: 'supply', description: 'blood thinner kept at the dispensary' }, relationships: [['Ines Duarte', 'orders', 'Warfarin Stock'], ['Warfarin Stock', 'kept at', 'Harbor Clinic']] },
  { text: 'Leo Brandt drove [[Paul Meyer]] home from the City Hospital after surgery.', known: ['Leo Brandt', 'City Hospital'], fresh: { name: 'Paul Meyer', type: 'person', description: 'patient recovering from knee surgery' }, relationships: [['Leo Brandt', 'drove', 'Paul Meyer'], ['Paul Meyer', 'treated at', 'City Hospital']] },
  { text: 'Mina Sato started the [[Knee Rehab Program]] with the Rowing Club juniors.', known: ['Mina Sato', 'Rowing Club'], fresh: { name: 'Knee Rehab Program', type: 'program', description: 'exercises after knee injuries' }, relationships: [['Mina Sato', 'runs', 'Knee Rehab Program'], ['Knee Rehab Program', 'serves', 'Rowing Club']] },
  { text: 'Tomas Berg trained [[Clara Neumann]] on the Harbor Clinic triage desk.', known: ['Tomas Berg', 'Harbor Clinic'], fresh: { name: 'Clara Neumann', type: 'person', description: 'new nurse on the triage desk' }, relationships: [['Tomas Berg', 'trained', 'Clara Neumann'], ['Clara Neumann', 'works at', 'Harbor Clinic']] },
  { text: 'Amara Okafor presented the [[Heart Screening Study]] at the City Hospital.', known: ['Amara Okafor', 'City Hospital'], fresh: { name: 'Heart Screening Study', type: 'study', description: 'screening of heart disease in rowers' }, relationships: [['Amara Okafor', 'leads', 'Heart Screening Study'], ['Heart Screening Study', 'run at', 'City Hospital']] },
  { text: 'Ines Duarte and Mina Sato planned a [[Falls Prevention Talk]] for older patients.', known: ['Ines Duarte', 'Mina Sato'], fresh: { name: 'Falls Prevention Talk', type: 'event', description: 'talk on avoiding falls at home' }, relationships: [['Ines Duarte', 'plans', 'Falls Prevention Talk'], ['Mina Sato', 'plans', 'Falls Prevention Talk']] },
  { text: 'Leo Brandt took [[Ambulance Seven]] to the Harbor Clinic for inspection.', known: ['Leo Brandt', 'Harbor Clinic'], fresh: { name: 'Ambulance Seven', type: 'vehicle', description: 'new ambulance of the night crew' }, relationships: [['Leo Brandt', 'drives', 'Ambulance Seven'], ['Ambulance Seven', 'based at', 'Harbor Clinic']] },
  { text: 'The Rowing Club asked Amara Okafor to staff the [[Regatta First Aid Tent]].', known: ['Rowing Club', 'Amara Okafor'], fresh: { name: 'Regatta First Aid Tent', type: 'place', description: 'first aid post at the spring regatta' }, relationships: [['Rowing Club', 'hosts', 'Regatta First Aid Tent'], ['Amara Okafor', 'staffs', 'Regatta First Aid Tent']] },
  { text: 'Tomas Berg handed the [[Winter Flu Clinic]] schedule to Ines Duarte.', known: ['Tomas Berg', 'Ines Duarte'], fresh: { name: 'Winter Flu Clinic', type: 'event', description: 'vaccination days in January' }, relationships: [['Tomas Berg', 'organizes', 'Winter Flu Clinic'], ['Ines Duarte', 'supplies', 'Winter Flu Clinic']] },
]

/** Notes naming 4 new names ([[linked]]) and 2 known ones, nothing typed for the new names. */
const NEW_NAME_NOTES: Array<{ text: string; fresh: string[]; known: [string, string] }> = [
  { text: 'Met [[Maria Chen]] from [[Acme Corp]] with Amara Okafor today. She leads the [[Atlas Migration]] and wants [[Bob Smith]] and Tomas Berg to review it.', fresh: ['Maria Chen', 'Acme Corp', 'Atlas Migration', 'Bob Smith'], known: ['Amara Okafor', 'Tomas Berg'] },
  { text: 'Ines Duarte ordered [[Heparin Stock]] from [[Nordic Pharma]] for the Harbor Clinic. [[Jonas Lind]] delivers it on the [[Tuesday Van]].', fresh: ['Heparin Stock', 'Nordic Pharma', 'Jonas Lind', 'Tuesday Van'], known: ['Ines Duarte', 'Harbor Clinic'] },
  { text: 'Leo Brandt drove [[Eva Novak]] to the City Hospital. Her daughter [[Sara Novak]] met them at the [[East Entrance]] with [[Doctor Pavel]].', fresh: ['Eva Novak', 'Sara Novak', 'East Entrance', 'Doctor Pavel'], known: ['Leo Brandt', 'City Hospital'] },
  { text: 'Mina Sato booked the [[Lake Boathouse]] for the Rowing Club. [[Coach Ruiz]] brings the [[Spring Crew]] and the [[Safety Launch]].', fresh: ['Lake Boathouse', 'Coach Ruiz', 'Spring Crew', 'Safety Launch'], known: ['Mina Sato', 'Rowing Club'] },
  { text: 'Tomas Berg wrote the [[Winter Rota]] with Amara Okafor. [[Nina Holt]] and [[Omar Haddad]] cover the [[Boxing Day Shift]].', fresh: ['Winter Rota', 'Nina Holt', 'Omar Haddad', 'Boxing Day Shift'], known: ['Tomas Berg', 'Amara Okafor'] },
]

const QUERIES = ['night shift schedule', 'blood thinner', 'knee surgery patient', 'new ambulance', 'flu vaccination', 'heart screening']

interface Count {
  keys: number
  fields: Set<string>
}

/** A field by its aria-label, by its name (the nth of that name), or a button by its text. */
type Target = { aria: string } | { name: string; nth?: number } | { text: string }

/** Presses Tab (or Shift+Tab, going back) until the target has focus, as a person moving through the form. */
async function tabTo(page: Page, target: Target, count: Count, key: 'Tab' | 'Shift+Tab' = 'Tab'): Promise<void> {
  for (let i = 0; i < 60; i++) {
    const here = await page.evaluate((t) => {
      const el = document.activeElement as HTMLInputElement | null
      if (!el) return false
      if ('aria' in t) return el.getAttribute('aria-label') === t.aria
      if ('name' in t) return el.getAttribute('name') === t.name && [...document.getElementsByName(t.name)].indexOf(el) === (t.nth ?? 0)
      return (el.textContent ?? '').trim() === t.text
    }, target)
    if (here) return
    await page.keyboard.press(key)
    count.keys++
  }
  throw new Error(`Tab never reached ${JSON.stringify(target)}`)
}

async function typeInto(page: Page, field: string, text: string, count: Count): Promise<void> {
  await page.keyboard.type(text)
  count.keys += [...text].length
  count.fields.add(field)
}

async function press(page: Page, key: string, count: Count): Promise<void> {
  await page.keyboard.press(key)
  count.keys++
}

async function saved(page: Page, before: string | null): Promise<void> {
  await page.waitForFunction((prev) => {
    const slug = document.querySelector('[data-testid="written-slug"]')?.textContent ?? null
    return slug !== null && slug !== prev && !document.querySelector('[data-testid="write-problems"]')
  }, before, { timeout: 20_000 }).catch(async (e) => {
    throw new Error(`not saved: ${(await page.locator('[data-testid="write-problems"]').textContent().catch(() => '')) || (e as Error).message}`)
  })
}

const slugNow = (page: Page): Promise<string | null> => page.evaluate(() => document.querySelector('[data-testid="written-slug"]')?.textContent ?? null)

/** From the text: [[link]] the new name, Alt+L for the known ones, then Tab through what is asked. */
async function captureFromText(page: Page, note: NoteScript): Promise<Count> {
  const count: Count = { keys: 0, fields: new Set() }
  const before = await slugNow(page)
  await page.getByLabel('Note', { exact: true }).focus()
  await typeInto(page, 'note', note.text, count)
  await press(page, 'Alt+l', count)
  await tabTo(page, { aria: `Type of ${note.fresh.name}` }, count)
  await typeInto(page, 'type', note.fresh.type, count)
  await press(page, 'Tab', count)
  await typeInto(page, 'description', note.fresh.description, count)
  for (const [i, [source, type, target]] of note.relationships.entries()) {
    const offered = await page.getByLabel(`Relationship from ${source} to ${target}`).count()
    if (!offered) {
      // offered the other way round: turn it, then come back to its type
      await tabTo(page, { aria: `Turn round: ${source} to ${target}` }, count)
      await press(page, 'Enter', count)
      await press(page, 'Shift+Tab', count)
    }
    await tabTo(page, { aria: `Relationship from ${source} to ${target}` }, count)
    await typeInto(page, `relationship ${i}`, type, count)
  }
  await press(page, 'Control+Enter', count)
  await saved(page, before)
  return count
}

/** Types the note with its new names [[linked]], Alt+L for the known ones, and saves: the proposals stand. */
async function captureNewNames(page: Page, note: (typeof NEW_NAME_NOTES)[number]): Promise<Count> {
  const count: Count = { keys: 0, fields: new Set() }
  const before = await slugNow(page)
  await page.getByLabel('Note', { exact: true }).focus()
  await typeInto(page, 'note', note.text, count)
  await press(page, 'Alt+l', count)
  await page.waitForFunction((n) => document.querySelectorAll('[data-testid="linked-entity"]').length === n, note.fresh.length + note.known.length)
  await press(page, 'Control+Enter', count)
  await saved(page, before)
  return count
}

/** Each new name was written, described by a non-empty text of its own sentence, and each note links all six. */
async function verifyNewNames(page: Page): Promise<void> {
  for (const note of NEW_NAME_NOTES) {
    for (const name of note.fresh) {
      const got = await page.evaluate(async (n) => JSON.parse((await window.seedTools!.get('inspect_entity')!.execute({ name: n })).content[0]!.text), name) as { entity?: { description: string; observations?: unknown } }
      const description = got.entity?.description ?? ''
      if (!description.includes(name)) throw new Error(`"${name}" was not written with the sentence naming it: ${JSON.stringify(got).slice(0, 300)}`)
    }
  }
}

/** The full form, as the only way used to be: title, note, then every row typed out. */
async function captureWithFullForm(page: Page, note: NoteScript, known: Map<string, { type: string; description: string }>): Promise<Count> {
  const count: Count = { keys: 0, fields: new Set() }
  const before = await slugNow(page)
  const plain = note.text.replace(/\[\[([^\]]+)\]\]/g, '$1')
  await page.getByLabel('Title').focus()
  await typeInto(page, 'title', plain.replace(/\.$/, ''), count)
  await press(page, 'Tab', count)
  await typeInto(page, 'note', plain, count)
  // the fold stays open after a save; a person opens it only when it is shut
  if (!(await page.locator('details.more').evaluate((el) => (el as HTMLDetailsElement).open))) {
    await tabTo(page, { text: 'More fields: category, tags, time, source, the full entity form' }, count)
    await press(page, 'Enter', count)
  }
  const entities = [...note.known.map((n) => ({ name: n, ...known.get(n)! })), note.fresh]
  for (const [i, e] of entities.entries()) {
    if (i > 0) {
      await tabTo(page, { text: 'Add entity' }, count)
      await press(page, 'Enter', count)
      // the new row sits just above the button
      await tabTo(page, { name: 'entity-name', nth: i }, count, 'Shift+Tab')
    } else await tabTo(page, { name: 'entity-name', nth: 0 }, count)
    await typeInto(page, `entity ${i} name`, e.name, count)
    await press(page, 'Tab', count)
    await typeInto(page, `entity ${i} type`, e.type, count)
    await press(page, 'Tab', count)
    await typeInto(page, `entity ${i} description`, e.description, count)
  }
  for (const [i, [source, type, target]] of note.relationships.entries()) {
    if (i > 0) {
      await tabTo(page, { text: 'Add relationship' }, count)
      await press(page, 'Enter', count)
      await tabTo(page, { name: 'rel-source', nth: i }, count, 'Shift+Tab')
    } else await tabTo(page, { name: 'rel-source', nth: 0 }, count)
    await typeInto(page, `relationship ${i} source`, source, count)
    await press(page, 'Tab', count)
    await typeInto(page, `relationship ${i} type`, type, count)
    await press(page, 'Tab', count)
    await typeInto(page, `relationship ${i} target`, target, count)
  }
  await press(page, 'Control+Enter', count)
  await saved(page, before)
  return count
}

export interface CaptureRow {
  way: string
  notes: number
  fieldsPerNote: number
  keystrokesPerNote: number
  /** Keystrokes beyond the note's own words (title, links, types, descriptions, moves). */
  overheadKeystrokesPerNote: number
  msPerNote: number
}

export interface CaptureBench {
  rows: CaptureRow[]
  goal: { fieldsBefore: number; fieldsGoal: number; fieldsNow: number; met: boolean }
  /** Notes naming 4 new names and 2 known ones: fields beyond the note's text, goal at most 1 (was 8). */
  newNames: { notes: number; fieldsBeyondTextPerNote: number; keystrokesBeyondTextPerNote: number; msPerNote: number; goal: number; met: boolean }
  recall: Array<{ viewport: string; queries: number; firstEntityVisible: number; firstSnippetVisible: number; misses: string[] }>
  note: string
}

async function openMemory(context: BrowserContext, origin: string, name: string): Promise<Page> {
  const page = await context.newPage()
  await page.setViewportSize({ width: 1280, height: 800 })
  await page.goto(origin)
  await page.waitForSelector('html[data-ready="true"]')
  await page.getByLabel('Name', { exact: true }).fill(name)
  await page.getByRole('button', { name: 'Create memory' }).click()
  await page.getByRole('heading', { name: 'Capture an observation' }).waitFor()
  await seed(page, [
    {
      title: 'Who is who',
      content: 'The people and places of the ward.',
      entities: KNOWN,
      relationships: [
        { source: 'Amara Okafor', type: 'works at', target: 'Harbor Clinic' },
        { source: 'Tomas Berg', type: 'works at', target: 'Harbor Clinic' },
        { source: 'Ines Duarte', type: 'works at', target: 'Harbor Clinic' },
        { source: 'Mina Sato', type: 'member of', target: 'Rowing Club' },
      ],
    },
  ])
  // the capture screen reads the memory's names when it opens
  await page.reload()
  await page.waitForSelector('html[data-ready="true"]')
  await page.getByLabel('Note', { exact: true }).waitFor()
  return page
}

/** Each new entity was written with its description, and each scripted relationship exists. */
async function verify(page: Page): Promise<void> {
  const inspect = (name: string): Promise<{ entity?: { description: string }; outgoing?: Array<{ type: string; target: string }> }> =>
    page.evaluate(async (n) => JSON.parse((await window.seedTools!.get('inspect_entity')!.execute({ name: n })).content[0]!.text), name)
  for (const note of NOTES) {
    const fresh = await inspect(note.fresh.name)
    if (fresh.entity?.description !== note.fresh.description) throw new Error(`"${note.fresh.name}" was not written with its description: ${JSON.stringify(fresh).slice(0, 300)}`)
    for (const [source, type, target] of note.relationships) {
      const out = (await inspect(source)).outgoing ?? []
      if (!out.some((r) => r.target === target && r.type === normalizeType(type))) throw new Error(`${source} ${type} ${target} was not written`)
    }
  }
}

async function measure(page: Page, way: string, run: (note: NoteScript) => Promise<Count>): Promise<CaptureRow> {
  let keys = 0
  let fields = 0
  let overhead = 0
  const started = performance.now()
  for (const note of NOTES) {
    const c = await run(note)
    keys += c.keys
    fields += c.fields.size
    overhead += c.keys - note.text.replace(/\[\[|\]\]/g, '').length
  }
  const ms = performance.now() - started
  await verify(page)
  const per = (n: number): number => Math.round((n / NOTES.length) * 10) / 10
  return { way, notes: NOTES.length, fieldsPerNote: per(fields), keystrokesPerNote: per(keys), overheadKeystrokesPerNote: per(overhead), msPerNote: Math.round(ms / NOTES.length) }
}

async function recallOnScreen(page: Page, viewport: { name: string; width: number; height: number }): Promise<CaptureBench['recall'][number]> {
  await page.setViewportSize({ width: viewport.width, height: viewport.height })
  let entity = 0
  let snippet = 0
  const misses: string[] = []
  for (const query of QUERIES) {
    await page.getByRole('link', { name: 'Recall', exact: true }).click()
    await page.getByLabel('Query', { exact: true }).fill(query)
    await page.getByRole('button', { name: 'Recall', exact: true }).click()
    await page.getByTestId('recalled-entities').locator('li').first().waitFor()
    const seen = await page.evaluate(() => {
      const inView = (el: Element | null): boolean => {
        if (!el) return false
        const r = el.getBoundingClientRect()
        return r.height > 0 && r.top >= 0 && r.bottom <= window.innerHeight
      }
      return {
        entity: inView(document.querySelector('[data-testid="recalled-entities"] > li strong')),
        snippet: inView(document.querySelector('[data-testid="snippets"] li')),
      }
    })
    if (seen.entity) entity++
    if (seen.snippet) snippet++
    if (!seen.entity || !seen.snippet) misses.push(query)
  }
  return { viewport: viewport.name, queries: QUERIES.length, firstEntityVisible: entity, firstSnippetVisible: snippet, misses }
}

export async function benchCapture(): Promise<CaptureBench> {
  if (!existsSync(CHROMIUM_PATH)) throw new Error(`${CHROMIUM_PATH} is missing (apt-get install chromium)`)
  const distDir = await mkdtemp(join(tmpdir(), 'cairn-bench-capture-'))
  const profile = await mkdtemp(join(tmpdir(), 'cairn-bench-capture-profile-'))
  let server: PreviewServer | undefined
  let context: BrowserContext | undefined
  try {
    await build({ root, configFile: join(root, 'vite.config.ts'), mode: 'production', logLevel: 'warn', build: { outDir: distDir, emptyOutDir: true } })
    server = await preview({ root, configFile: join(root, 'vite.config.ts'), logLevel: 'warn', build: { outDir: distDir }, preview: { host: '127.0.0.1', port: 0, strictPort: true, open: false } })
    const origin = server.resolvedUrls?.local[0]
    if (!origin) throw new Error('the preview server reported no address')
    context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM_PATH, headless: true, args: CHROMIUM_ARGS })
    // tsx keeps function names with a `__name` helper that page-side functions do not have
    await context.addInitScript({ content: 'window.__name = (f) => f' })
    await installToolRegistry(context)
    const known = new Map(KNOWN.map((k) => [k.name, { type: k.type, description: k.description }]))

    const textPage = await openMemory(context, origin, 'Capture from text')
    const fromText = await measure(textPage, 'from the text ([[link]], Alt+L, Tab)', (n) => captureFromText(textPage, n))
    const newPage = await openMemory(context, origin, 'Capture new names')
    let beyond = 0
    let extraKeys = 0
    const startedNew = performance.now()
    for (const note of NEW_NAME_NOTES) {
      const c = await captureNewNames(newPage, note)
      beyond += c.fields.size - 1
      extraKeys += c.keys - note.text.replace(/\[\[|\]\]/g, '').length
    }
    const msNew = Math.round((performance.now() - startedNew) / NEW_NAME_NOTES.length)
    await verifyNewNames(newPage)
    const perNew = (n: number): number => Math.round((n / NEW_NAME_NOTES.length) * 10) / 10
    const newNames = { notes: NEW_NAME_NOTES.length, fieldsBeyondTextPerNote: perNew(beyond), keystrokesBeyondTextPerNote: perNew(extraKeys), msPerNote: msNew, goal: 1, met: perNew(beyond) <= 1 }
    await newPage.close()
    const formPage = await openMemory(context, origin, 'Capture with the full form')
    const fullForm = await measure(formPage, 'full form, every field typed', (n) => captureWithFullForm(formPage, n, known))

    const recall = []
    for (const viewport of [{ name: '1280x800', width: 1280, height: 800 }, { name: '390x844', width: 390, height: 844 }]) recall.push(await recallOnScreen(textPage, viewport))
    const fieldsGoal = Math.floor(FIELDS_BEFORE / 3)
    return {
      rows: [fromText, fullForm],
      goal: { fieldsBefore: FIELDS_BEFORE, fieldsGoal, fieldsNow: fromText.fieldsPerNote, met: fromText.fieldsPerNote <= fieldsGoal },
      newNames,
      recall,
      note: 'Keystrokes count every character, Tab, Enter and shortcut; ms per note is the scripted run (typing without delay), so it measures the app, not a person.',
    }
  } finally {
    await context?.close().catch(() => undefined)
    await server?.close()
    await rm(distDir, { recursive: true, force: true })
    await rm(profile, { recursive: true, force: true })
  }
}

export function printCaptureBench(r: CaptureBench): void {
  console.log('\nCapture: a scripted person, keyboard only, 10 notes of 3 entities (2 known) and 2 relationships each (built app, headless Chromium)')
  console.table(r.rows)
  console.log(`fields per note: ${r.goal.fieldsNow} (goal at most ${r.goal.fieldsGoal}, a third of ${r.goal.fieldsBefore}): ${r.goal.met ? 'met' : 'NOT met'}`)
  const n = r.newNames
  console.log(`${n.notes} notes naming 4 new names and 2 known ones, proposals taken: ${n.fieldsBeyondTextPerNote} fields and ${n.keystrokesBeyondTextPerNote} keystrokes beyond the text per note, ${n.msPerNote} ms per note (goal at most ${n.goal} field): ${n.met ? 'met' : 'NOT met'}`)
  console.log('Recall: first entity and first note on screen without scrolling')
  console.table(r.recall)
}
