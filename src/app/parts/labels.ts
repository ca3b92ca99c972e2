// How the app shows a stored type (of an entity or a relationship) to a person: one way on every
// screen. Types are stored normalized (`works_at`); a person reads `works at`.

export function typeLabel(type: string): string {
  return type.replace(/_/g, ' ')
}
