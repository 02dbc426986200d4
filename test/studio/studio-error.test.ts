/**
 * How an exception crosses to the renderer (engine/server/studio-error.ts): a log database that
 * cannot be reached (PostgreSQL restarting, stopped, cut off) is `unavailable`, retryable, HTTP
 * 503 — the studio's next request works once it is back — not an `internal` 500 that says not to
 * retry; any other unexpected error stays `internal`.
 */
import { describe, expect, it } from 'vitest';
import { LogConnectionError } from '../../engine/log/errors.js';
import { httpStatusOf, StudioError, toProtocolError } from '../../engine/server/studio-error.js';

describe('toProtocolError', () => {
  it('an unreachable log database is unavailable and retryable (503)', () => {
    const down = toProtocolError(new LogConnectionError('postgres://u:***@127.0.0.1:5432/db', 'connect ECONNREFUSED 127.0.0.1:5432'));
    expect(down).toEqual({ code: 'unavailable', message: expect.stringMatching(/^studio: cannot reach the log database postgres:\/\/u:\*\*\*@/), retryable: true });
    expect(httpStatusOf(down.code)).toBe(503);
    // The server shutting down under an open connection (SQLSTATE 57P01), as pg reports it.
    const shutdown = Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' });
    expect(toProtocolError(shutdown)).toMatchObject({ code: 'unavailable', retryable: true });
  });

  it('a StudioError keeps its code; anything else is internal (500)', () => {
    expect(toProtocolError(new StudioError('not-found', 'no run r1'))).toEqual({ code: 'not-found', message: 'no run r1', retryable: false });
    const other = toProtocolError(new Error('boom'));
    expect(other).toEqual({ code: 'internal', message: 'studio: boom', retryable: false });
    expect(httpStatusOf(other.code)).toBe(500);
  });
});
