/**
 * Text from a run's data (record values, keys, store keys in event lines) may hold Unicode bidi
 * controls (U+202E RIGHT-TO-LEFT OVERRIDE and kin). Rendered as they are, they reorder what the
 * studio shows: a record whose name is "\u202Eevil" read "live" in the State tab. The studio
 * shows them as \uXXXX escapes (as JSON shows \u0000), and leaves every other character alone
 * (emoji joined by U+200D included).
 */
import { describe, expect, it } from 'vitest';
import { visibleControls } from '../../renderer/src/lib/visible-text.js';
import { preview } from '../../renderer/src/lib/json-rows.js';
import { eventLine } from '../../renderer/src/lib/event-line.js';
import type { StoredEvent } from '../../renderer/src/lib/protocol.js';

const ev = (type: string, payload: unknown): StoredEvent => ({ runId: 'r', seq: 1, type, stepPath: 'L/1[0]/0', payload, recordedAt: 0 }) as StoredEvent;

describe('bidi controls in run data are shown, not obeyed', () => {
  it('escapes every bidi control and nothing else', () => {
    expect(visibleControls('a\u202Eevil\u202Cb')).toBe('a\\u202eevil\\u202cb');
    for (const c of ['\u061C', '\u200E', '\u200F', '\u202A', '\u202B', '\u202C', '\u202D', '\u202E', '\u2066', '\u2067', '\u2068', '\u2069']) {
      expect(visibleControls(c)).toBe(`\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
    }
    const plain = 'مرحبا 🎉👨‍👩‍👧 <script> \\u0000';
    expect(visibleControls(plain)).toBe(plain);
  });

  it('in a JSON tree row: values and keys', () => {
    expect(preview('\u202Eevil')).toBe('"\\u202eevil"');
    expect(preview({ ['\u202Ekey']: '\u2067x\u2069' })).toBe('{\\u202ekey: "\\u2067x\\u2069"}');
  });

  it('in an event line: a store key and a loop key', () => {
    expect(eventLine(ev('store.write', { effectId: 'e', store: 'items', key: 'h\u202E1', record: {}, op: 'set' }))).toBe('items ← h\\u202e1');
    expect(eventLine(ev('loop.iteration', { index: 0, key: '\u202Eevil' }))).toBe('[0] \\u202eevil');
  });
});
