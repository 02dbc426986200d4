/**
 * An imported run bundle is checked for event types, seqs and loggable payloads, not for each
 * payload's shape: a bundle whose step.failed said `"error": "not an object"` imported, and
 * opening it blanked the whole studio (TypeError in the Events list line and the Timeline's
 * selection line; the link kept the run, so a reload blanked it again). The line of an event
 * whose payload is not the shape its type has now says so instead of throwing, and text that is
 * not a string is shown as nothing rather than read as one.
 */
import { describe, expect, it } from 'vitest';
import { eventLine } from '../../renderer/src/lib/event-line.js';
import { visibleControls } from '../../renderer/src/lib/visible-text.js';
import type { StoredEvent } from '../../renderer/src/lib/protocol.js';

const ev = (type: string, payload: unknown): StoredEvent => ({ runId: 'r', seq: 7, type, stepPath: 'A/0', payload, recordedAt: 0 }) as StoredEvent;

describe('events whose payload is not the shape of their type', () => {
  it('get a line that says so, never a TypeError', () => {
    expect(eventLine(ev('step.failed', { stepType: 'Fetch', error: 'not an object' }))).toBe('');
    expect(() => eventLine(ev('http.request', {}))).not.toThrow();
    expect(eventLine(ev('http.request', {}))).toMatch(/payload not as expected/);
    expect(() => eventLine(ev('http.response', { response: null }))).not.toThrow();
    expect(() => eventLine(ev('run.started', {}))).not.toThrow();
  });

  it('text that is not a string shows as nothing', () => {
    expect(visibleControls(undefined as unknown as string)).toBe('');
    expect(visibleControls(42 as unknown as string)).toBe('');
  });
});
