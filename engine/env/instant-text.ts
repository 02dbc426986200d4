/**
 * An instant for people (progress lines, `reqon show`, `reqon runs`, the timeline): ISO 8601
 * when it is a date JavaScript can represent, else its milliseconds said plainly. Never throws:
 * a stored instant out of the date range (a log written before durations were bounded at check
 * time) must not crash the command that shows it.
 */
export function instantText(ms: number): string {
  const date = new Date(ms);
  return Number.isNaN(date.getTime()) ? `${String(ms)} ms after 1970 (beyond the date range)` : date.toISOString();
}
