// Equality of two values as JSON would write them, without writing them: comparing every note
// of a large memory with its sync document's copy as strings costs two strings per note.

/**
 * Whether `a` and `b` are equal as JSON: key order is ignored, as are keys holding undefined.
 * Only plain objects, arrays, strings, numbers, booleans and null compare equal to anything
 * but themselves; bytes, dates and class instances are never equal to a different object.
 */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false
    for (let i = 0; i < a.length; i++) if (!sameJson(a[i], b[i])) return false
    return true
  }
  if (Array.isArray(b) || !isPlainObject(a) || !isPlainObject(b)) return false
  let defined = 0
  for (const key in a) {
    const value = a[key]
    if (value === undefined) continue
    defined++
    if (!Object.prototype.hasOwnProperty.call(b, key) || !sameJson(value, b[key])) return false
  }
  for (const key in b) if (b[key] !== undefined) defined--
  return defined === 0
}

function isPlainObject(value: object): value is Record<string, unknown> {
  const proto = Object.getPrototypeOf(value)
  return proto === Object.prototype || proto === null
}
