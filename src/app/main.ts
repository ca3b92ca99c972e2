// Browser entry: starts the engine worker, then loads and mounts the shell (shell.ts). This
// chunk holds little more than the worker link, so the worker's script is fetched and run, and
// the memory list read, while the shell's chunk is still loading.
import { startEngine } from './worker-link'

startEngine()
const { startShell } = await import('./shell')
startShell()
