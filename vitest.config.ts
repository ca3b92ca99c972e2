// Two test projects: fast unit tests in Node, and browser end-to-end tests
// against the production build in Debian's Chromium (see test/e2e/harness.ts).
import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          environment: 'node',
          include: ['test/**/*.test.ts'],
          exclude: ['test/e2e/**', 'node_modules/**', 'dist/**'],
          sequence: { groupOrder: 0 },
        },
      },
      {
        test: {
          name: 'e2e',
          environment: 'node',
          include: ['test/e2e/**/*.e2e.test.ts'],
          // Builds dist/ once, and only when an e2e file is selected.
          globalSetup: ['test/e2e/global-setup.ts'],
          // After the unit tests, one file at a time: each file runs its own
          // Chromium, and the machine has two cores.
          sequence: { groupOrder: 1 },
          fileParallelism: false,
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
    ],
  },
})
