// The time a question asks about, read by rules without a model: a date, month or year it names,
// "last week / month / year" against the memory's own newest date, "before" / "after" the event it
// is about, and which end of time ("first", else the newest) it leans to.

export interface QuestionTime {
  /** A period the question names ("on 7 May 2023" and the week after, "in May 2023", "in 2022"), as ISO bounds [from, to). */
  range?: { from: string; to: string }
  /** Which end of time the question leans to: "first" / "earliest" the oldest, else the newest as a weak prior. */
  order: 'newest' | 'oldest'
  /** The answer lies before or after the event the question names ("what did she do after the race?"). */
  relation?: 'before' | 'after'
  /** "last week" / "last month" / "last year": a period before the memory's newest note, read by `lastPeriod`. */
  last?: 'week' | 'month' | 'year'
  /** The question asks for a time ("when did…", "how long ago…", "what year…"): its answer is the note of the event itself. */
  asksTime?: true
}

const MONTHS = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december']
const MONTH = `(${MONTHS.join('|')}|${MONTHS.map((m) => m.slice(0, 3)).join('|')}|sept)\\.?`
const DAY = '(\\d{1,2})(?:st|nd|rd|th)?'
const YEAR_WORD = '(\\d{4})'
const DAY_MONTH_YEAR = new RegExp(`\\b${DAY}\\s+(?:of\\s+)?${MONTH},?\\s+${YEAR_WORD}\\b`, 'i')
const MONTH_DAY_YEAR = new RegExp(`\\b${MONTH}\\s+${DAY},?\\s+${YEAR_WORD}\\b`, 'i')
const ISO_DAY = /\b(\d{4})-(\d{2})-(\d{2})\b/
const MONTH_YEAR = new RegExp(`\\b${MONTH},?\\s+(?:of\\s+)?${YEAR_WORD}\\b`, 'i')
const YEAR = /\b(19\d{2}|20\d{2})\b/
const OLDEST = /\b(first|earliest|originally|initially|oldest)\b/i
const LAST_PERIOD = /\blast\s+(week|month|year)\b/i
const BEFORE = /\b(before|prior to|until)\b/i
const AFTER = /\b(after|since|afterwards?|following)\b/i
const ASKS_TIME = /^\W*(?:(?:when|how long ago|(?:in |on )?(?:what|which) (?:date|day|month|year) (?:did|do|does|was|were|is|will|has|had))\b|(?:what|which) (?:date|day|month|year)\?)/i

const NO_TIME: QuestionTime = { order: 'newest' }

function monthOf(word: string): number {
  const w = word.toLowerCase().replace('.', '')
  return MONTHS.findIndex((m) => m.startsWith(w.slice(0, 3)))
}

function utc(year: number, month: number, day: number): string {
  return new Date(Date.UTC(year, month, day)).toISOString()
}

/**
 * Days after a named day that still count as it: what happened on a day is often written down a
 * few days later ("accepted on May 23", told on May 27).
 */
const DAY_WINDOW = 7

/** A named day and the week after it as ISO bounds; undefined for a date that does not exist. */
function dayRange(year: number, month: number, day: number): { from: string; to: string } | undefined {
  if (month < 0 || month > 11 || day < 1 || day > 31) return undefined
  const d = new Date(Date.UTC(year, month, day))
  if (d.getUTCMonth() !== month) return undefined
  return { from: d.toISOString(), to: utc(year, month, day + DAY_WINDOW) }
}

/**
 * The time a question names or leans to. A question naming none gets `{ order: 'newest' }`.
 * `coarse` reads only months and years (the eval measures the finer rules against it).
 */
export function questionTime(query: string, coarse = false): QuestionTime {
  if (!query) return NO_TIME
  const out: QuestionTime = { order: OLDEST.test(query) ? 'oldest' : 'newest' }
  const range = namedRange(query, coarse)
  if (range) out.range = range
  if (ASKS_TIME.test(query)) out.asksTime = true
  if (coarse) return out.range || out.order === 'oldest' || out.asksTime ? out : NO_TIME
  const last = LAST_PERIOD.exec(query)
  if (last) out.last = last[1]!.toLowerCase() as QuestionTime['last']
  const before = BEFORE.exec(query)
  const after = AFTER.exec(query)
  // both, or neither: no direction ("between the move and the wedding" is not read)
  if (before && !after) out.relation = 'before'
  else if (after && !before) out.relation = 'after'
  return out.range || out.last || out.relation || out.order === 'oldest' || out.asksTime ? out : NO_TIME
}

function namedRange(query: string, coarse: boolean): { from: string; to: string } | undefined {
  if (coarse) return monthOrYear(query)
  const dmy = DAY_MONTH_YEAR.exec(query)
  const mdy = MONTH_DAY_YEAR.exec(query)
  const iso = ISO_DAY.exec(query)
  // a day that does not exist ("31 February") falls back to its month
  const day =
    (dmy && dayRange(Number(dmy[3]), monthOf(dmy[2]!), Number(dmy[1]))) ||
    (mdy && dayRange(Number(mdy[3]), monthOf(mdy[1]!), Number(mdy[2]))) ||
    (iso && dayRange(Number(iso[1]), Number(iso[2]) - 1, Number(iso[3])))
  return day || monthOrYear(query)
}

function monthOrYear(query: string): { from: string; to: string } | undefined {
  const my = MONTH_YEAR.exec(query)
  if (my) {
    const month = monthOf(my[1]!)
    const year = Number(my[2])
    return { from: utc(year, month, 1), to: utc(year, month + 1, 1) }
  }
  const y = YEAR.exec(query)
  if (y) {
    const year = Number(y[1])
    return { from: utc(year, 0, 1), to: utc(year + 1, 0, 1) }
  }
  return undefined
}

/**
 * "last week / month / year" as ISO bounds, against `newest` (the memory's newest date among the
 * candidates): the period of that length ending at the start of the day after it.
 */
export function lastPeriod(unit: 'week' | 'month' | 'year', newest: number): { from: string; to: string } {
  const end = new Date(newest)
  const to = Date.UTC(end.getUTCFullYear(), end.getUTCMonth(), end.getUTCDate() + 1)
  const from = new Date(to)
  if (unit === 'week') from.setUTCDate(from.getUTCDate() - 7)
  else if (unit === 'month') from.setUTCMonth(from.getUTCMonth() - 1)
  else from.setUTCFullYear(from.getUTCFullYear() - 1)
  return { from: from.toISOString(), to: new Date(to).toISOString() }
}
