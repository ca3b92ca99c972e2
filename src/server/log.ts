// Structured log lines of the sync server. Tokens never appear in them: callers pass the
// connection id and agent, never the secret or the request URL.

export type LogLevel = 'info' | 'warn' | 'error'

export interface SyncLog {
  (level: LogLevel, event: string, fields?: Record<string, unknown>): void
}

/** One JSON object per line on stderr. */
export const jsonLineLog: SyncLog = (level, event, fields = {}) => {
  process.stderr.write(`${JSON.stringify({ at: new Date().toISOString(), level, event, ...fields })}\n`)
}

export const silentLog: SyncLog = () => {}
