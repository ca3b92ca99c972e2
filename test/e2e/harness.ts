// Browser test harness: serves a production build on 127.0.0.1 and drives
// Debian's Chromium through playwright-core. Each device is its own browser
// profile (fresh temporary user-data-dir), so storage never leaks between
// test files or between the devices of one test.
import { existsSync } from 'node:fs'
import { mkdir, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { chromium, type BrowserContext, type Page } from 'playwright-core'
import { preview, type PreviewServer } from 'vite'
import { inject } from 'vitest'

declare module 'vitest' {
  export interface ProvidedContext {
    /** Absolute path of the build made by global-setup.ts. */
    distDir: string
  }
}

export const CHROMIUM_PATH = '/usr/bin/chromium'
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
]

const root = fileURLToPath(new URL('../..', import.meta.url))
const screenshotDir = join(root, 'test/e2e/screenshots')

export interface Device {
  readonly context: BrowserContext
  readonly userDataDir: string
  /** Opens `path` of the app in a new tab and waits until the shell is mounted. */
  openApp(path?: string): Promise<Page>
  close(): Promise<void>
}

export interface Harness {
  /** Origin of the test server, with a trailing slash. */
  readonly baseUrl: string
  /** The device every test file starts with. */
  readonly device: Device
  /** Uncaught page errors and console errors seen on any device, as text. */
  readonly pageErrors: string[]
  openApp(path?: string): Promise<Page>
  /** Another browser profile with its own storage, e.g. a second device for sync tests. */
  newIsolatedContext(): Promise<Device>
  /** Saves a PNG under test/e2e/screenshots/ and returns its path. */
  screenshot(page: Page, name: string): Promise<string>
  close(): Promise<void>
}

export interface HarnessOptions {
  /**
   * Extra files served at the given absolute paths, e.g. `{ '/e2e/model.onnx': bytes }`,
   * ahead of the build's own. Read on each request, so a test may change an entry later
   * (a new deployment of `/sw.js`) without touching the build the other files share.
   */
  files?: Record<string, Uint8Array | string>
  /** Extra Chromium switches for every device, e.g. `['--enable-blink-features=WebMCP']`. */
  chromiumArgs?: string[]
}

function assertChromium(): void {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(
      `Chromium is required for the browser tests but ${CHROMIUM_PATH} does not exist. ` +
        'Install it with `apt-get install -y chromium` (bash .ci/run does this), ' +
        'or run the unit tests alone with `npx vitest run --project unit`.',
    )
  }
}

async function startServer(distDir: string, files: Record<string, Uint8Array | string>): Promise<PreviewServer> {
  return preview({
    root,
    configFile: join(root, 'vite.config.ts'),
    logLevel: 'warn',
    build: { outDir: distDir },
    preview: { host: '127.0.0.1', port: 0, strictPort: true, open: false },
    plugins: [
      {
        name: 'cairn:e2e-files',
        configurePreviewServer(server) {
          server.middlewares.use((req, res, next) => {
            const body = files[req.url?.split('?')[0] ?? '']
            if (body === undefined) return next()
            // a service worker script must be served as JavaScript or the browser refuses it
            const type = req.url?.split('?')[0]?.endsWith('.js') ? 'text/javascript' : typeof body === 'string' ? 'text/plain' : 'application/octet-stream'
            res.setHeader('Content-Type', type)
            res.end(body)
          })
        },
      },
    ],
  })
}

async function launchDevice(baseUrl: string, pageErrors: string[], extraArgs: readonly string[]): Promise<Device> {
  const userDataDir = await mkdtemp(join(tmpdir(), 'cairn-e2e-profile-'))
  let context: BrowserContext
  try {
    context = await chromium.launchPersistentContext(userDataDir, {
      executablePath: CHROMIUM_PATH,
      headless: true,
      args: [...CHROMIUM_ARGS, ...extraArgs],
      baseURL: baseUrl,
      viewport: { width: 1024, height: 720 },
    })
  } catch (error) {
    await rm(userDataDir, { recursive: true, force: true })
    throw error
  }
  context.setDefaultTimeout(20_000)
  context.on('weberror', (e) => pageErrors.push(`pageerror: ${e.error().message}`))
  context.on('console', (m) => {
    if (m.type() === 'error') pageErrors.push(`console: ${m.text()}`)
  })
  return {
    context,
    userDataDir,
    async openApp(path = '/') {
      const page = await context.newPage()
      await page.goto(path)
      await page.waitForSelector('html[data-ready="true"]')
      return page
    },
    async close() {
      await context.close().catch(() => undefined)
      await rm(userDataDir, { recursive: true, force: true })
    },
  }
}

/** Starts the server and the first device. Call `close()` in afterAll. */
export async function startHarness(options: HarnessOptions = {}): Promise<Harness> {
  assertChromium()
  const distDir = inject('distDir')
  const server = await startServer(distDir, options.files ?? {})
  const baseUrl = server.resolvedUrls?.local[0]
  if (!baseUrl) {
    await server.close()
    throw new Error('The test server did not report a local URL')
  }
  const pageErrors: string[] = []
  const devices: Device[] = []
  try {
    devices.push(await launchDevice(baseUrl, pageErrors, options.chromiumArgs ?? []))
  } catch (error) {
    await server.close()
    throw error
  }
  const device = devices[0] as Device
  return {
    baseUrl,
    device,
    pageErrors,
    openApp: (path) => device.openApp(path),
    async newIsolatedContext() {
      const extra = await launchDevice(baseUrl, pageErrors, options.chromiumArgs ?? [])
      devices.push(extra)
      return extra
    },
    async screenshot(page, name) {
      await mkdir(screenshotDir, { recursive: true })
      const file = join(screenshotDir, `${name.replace(/[^\w.-]+/g, '-')}.png`)
      await page.screenshot({ path: file, fullPage: true })
      return file
    },
    async close() {
      await Promise.all(devices.map((d) => d.close()))
      await server.close()
    },
  }
}
