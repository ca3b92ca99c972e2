// Shared test data and waits for the sync tests.
import type { Alias, AppendixFile, Observation } from '../../src/core/types'

export function observation(slug: string, overrides: Partial<Observation> = {}): Observation {
  return {
    slug,
    title: `Title of ${slug}`,
    content: `Content of ${slug}`,
    category: 'note',
    tags: ['sync'],
    observedAt: '2026-03-14T09:30:00.000Z',
    confidence: 1,
    source: '',
    entities: [{ name: `Entity ${slug}`, type: 'thing', description: `described by ${slug}`, queries: [] }],
    relationships: [],
    files: [],
    createdBy: 'conn_test',
    createdAt: '2026-03-14T09:30:00.000Z',
    updatedAt: '2026-03-14T09:30:00.000Z',
    ...overrides,
  }
}

export function alias(variant: string, canonical: string): Alias {
  return { variant, canonical, createdAt: '2026-03-14T09:30:00.000Z' }
}

export function fileMeta(path: string, size: number): AppendixFile {
  return {
    path,
    filename: path.split('/').pop() ?? path,
    type: 'text/plain',
    size,
    description: 'a test file',
    createdBy: 'conn_test',
    createdAt: '2026-03-14T09:30:00.000Z',
    sha256: '0'.repeat(64),
  }
}

/** Polls until `check` returns true; fails with `what` after `timeoutMs`. */
export async function waitFor(what: string, check: () => boolean, timeoutMs = 5_000): Promise<void> {
  const start = Date.now()
  while (!check()) {
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 10))
  }
}
