// Four test projects: fast unit tests in Node, browser end-to-end tests against the
// production build in Debian's Chromium (see test/e2e/harness.ts), browser fault tests
// (worker killed, page reloaded, storage full) on a page of their own (test/faults/), and
// several sync servers on one Redis under load and faults (test/load/sync-cluster.test.ts).
import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          environment: 'node',
          include: ['test/**/*.test.ts'],
          exclude: ['test/e2e/**', 'test/faults/**/*.e2e.test.ts', 'test/load/sync-cluster.test.ts', 'node_modules/**', 'dist/**'],
          sequence: { groupOrder: 0 },
          // Correctness, not speed: the scale cases (10k entities) run beside other files
          // on two cores, so they get room; speed is measured by `npm run bench`.
          testTimeout: 30_000,
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
          // a test drives a whole flow (two devices, a server, reloads): 30-40 s on this
          // 2-core machine under other work, so the budget leaves room to spare
          testTimeout: 120_000,
          hookTimeout: 120_000,
          // expect.poll gives up after 1 s by default, yet what it waits for (the engine
          // worker, a layout, the storage estimate) can take longer on a busy machine; it
          // returns as soon as the condition holds, so it gets the harness's action timeout
          expect: { poll: { timeout: 20_000 } },
        },
      },
      {
        test: {
          name: 'faults',
          environment: 'node',
          include: ['test/faults/**/*.e2e.test.ts'],
          // Builds the fault page once, and only when a fault file is selected.
          globalSetup: ['test/faults/global-setup.ts'],
          // After the e2e files, one file at a time, for the same reason.
          sequence: { groupOrder: 2 },
          fileParallelism: false,
          // a test drives a whole flow (two devices, a server, reloads): 30-40 s on this
          // 2-core machine under other work, so the budget leaves room to spare
          testTimeout: 120_000,
          hookTimeout: 120_000,
          // expect.poll gives up after 1 s by default, yet what it waits for (the engine
          // worker, a layout, the storage estimate) can take longer on a busy machine; it
          // returns as soon as the condition holds, so it gets the harness's action timeout
          expect: { poll: { timeout: 20_000 } },
        },
      },
      {
        test: {
          name: 'cluster',
          environment: 'node',
          // Three sync-server processes, Redis and 60 clients: last, and alone, so neither it
          // nor the timing of other tests suffers from sharing two cores.
          include: ['test/load/sync-cluster.test.ts'],
          sequence: { groupOrder: 3 },
          fileParallelism: false,
          testTimeout: 180_000,
        },
      },
    ],
  },
})
