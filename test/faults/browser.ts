// Serves the fault-test page (built by global-setup.ts) on 127.0.0.1 and opens it in Debian's
// Chromium, one browser profile per device, with the flags of the e2e harness.
import { existsSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { chromium, type BrowserContext, type Page } from 'playwright-core'
import { preview, type PreviewServer } from 'vite'
import { afterAll, beforeAll, inject } from 'vitest'
import { CHROMIUM_ARGS, CHROMIUM_PATH } from '../e2e/harness'
import { FAULT_PAGE } from './global-setup'

declare module 'vitest' {
  export interface ProvidedContext {
    /** Absolute path of the fault page build made by global-setup.ts. */
    faultPageDir: string
  }
}

const root = fileURLToPath(new URL('../..', import.meta.url))

export interface FaultDevice {
  readonly context: BrowserContext
  /** Opens the fault page in a new tab and waits until `window.cairnFaults` is there. */
  openPage(): Promise<Page>
  close(): Promise<void>
}

export interface FaultBrowser {
  readonly baseUrl: string
  /** Page errors and console errors of every device, as text. */
  readonly pageErrors: string[]
  /** A browser profile with its own storage. */
  newDevice(): Promise<FaultDevice>
  close(): Promise<void>
}

export async function startFaultBrowser(): Promise<FaultBrowser> {
  if (!existsSync(CHROMIUM_PATH)) throw new Error(`the fault tests need Chromium at ${CHROMIUM_PATH} (apt-get install -y chromium)`)
  const server: PreviewServer = await preview({
    root,
    configFile: join(root, 'vite.config.ts'),
    logLevel: 'warn',
    build: { outDir: inject('faultPageDir') },
    preview: { host: '127.0.0.1', port: 0, strictPort: true, open: false },
  })
  const baseUrl = server.resolvedUrls?.local[0]
  if (!baseUrl) {
    await server.close()
    throw new Error('the fault page server did not report a local URL')
  }
  const pageErrors: string[] = []
  const devices: FaultDevice[] = []
  return {
    baseUrl,
    pageErrors,
    async newDevice() {
      const userDataDir = await mkdtemp(join(tmpdir(), 'cairn-faults-profile-'))
      const context = await chromium.launchPersistentContext(userDataDir, { executablePath: CHROMIUM_PATH, headless: true, args: CHROMIUM_ARGS, baseURL: baseUrl })
      context.setDefaultTimeout(20_000)
      context.on('weberror', (e) => pageErrors.push(`pageerror: ${e.error().message}`))
      context.on('console', (m) => {
        if (m.type() === 'error') pageErrors.push(`console: ${m.text()}`)
      })
      const device: FaultDevice = {
        context,
        async openPage() {
          const page = await context.newPage()
          await page.goto(FAULT_PAGE)
          await page.waitForSelector('html[data-ready="true"]')
          return page
        },
        async close() {
          await context.close().catch(() => undefined)
          await rm(userDataDir, { recursive: true, force: true })
        },
      }
      devices.push(device)
      return device
    },
    async close() {
      await Promise.all(devices.map((d) => d.close()))
      await server.close()
    },
  }
}

/** Calls a method of the fault worker behind `page`; an error it returns is thrown, with its code. */
export async function callWorker<T>(page: Page, method: string, ...args: unknown[]): Promise<T> {
  const r = (await page.evaluate(([m, a]) => window.cairnFaults!.call(m as never, ...(a as unknown[])), [method, args] as const)) as { value?: T; error?: { code?: string; message?: string } }
  if (r.error) throw new Error(`${method} failed: ${r.error.code ?? ''} ${r.error.message ?? ''}`)
  return r.value as T
}

/**
 * One device's fault page for the tests of a file: a browser started before them and closed
 * after. `page()` is that page; `call` calls its worker as `callWorker` does; `pageErrors()`
 * are the browser's (see FaultBrowser).
 */
export function onePageForFile(): { page(): Page; call<T>(method: string, ...args: unknown[]): Promise<T>; pageErrors(): string[] } {
  let browser: FaultBrowser | undefined
  let page: Page | undefined
  beforeAll(async () => {
    browser = await startFaultBrowser()
    page = await (await browser.newDevice()).openPage()
  })
  afterAll(async () => {
    await browser?.close()
  })
  const current = () => {
    if (!page) throw new Error('the fault page is opened before the tests')
    return page
  }
  return { page: current, call: (method, ...args) => callWorker(current(), method, ...args), pageErrors: () => browser?.pageErrors ?? [] }
}
