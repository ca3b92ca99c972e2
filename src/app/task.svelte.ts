// What one screen is doing: busy while an action runs, then its error or its outcome message.
// Screens share it so every action clears the last outcome and reports failures the same way.
import { errorMessage } from './worker-link'

export class ScreenTask {
  busy = $state(false)
  error = $state('')
  message = $state('')

  /** Runs `action`; a string it returns becomes the message, anything it throws the error. */
  async run(action: () => Promise<string | void>): Promise<void> {
    this.busy = true
    this.error = ''
    this.message = ''
    try {
      const outcome = await action()
      if (typeof outcome === 'string') this.message = outcome
    } catch (e) {
      this.error = errorMessage(e)
    } finally {
      this.busy = false
    }
  }

  /** For work outside `run`, such as loading a screen's data. */
  fail(e: unknown): void {
    this.error = errorMessage(e)
  }
}
