/**
 * Text from a run's data shown as it is, not as it asks to be laid out: Unicode bidi controls
 * (U+061C, U+200E/F, U+202A–U+202E, U+2066–U+2069) become \uXXXX escapes, as JSON shows U+0000.
 * Left in, an API's "\u202Eevil" reads "live" in the studio — a value the record does not hold.
 * Every other character (RTL scripts, emoji joined by U+200D) is left alone.
 */
const BIDI_CONTROLS = /[\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/g;

export function visibleControls(text: string): string {
  // An imported bundle's payloads are not checked field by field: what should be text may not be.
  if (typeof text !== 'string') return '';
  return text.replace(BIDI_CONTROLS, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** JSON.stringify, bidi controls escaped; undefined for what JSON cannot say. */
export function jsonText(value: unknown): string | undefined {
  const s = JSON.stringify(value) as string | undefined;
  return s === undefined ? undefined : visibleControls(s);
}
