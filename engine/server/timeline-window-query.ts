/**
 * The checked form of a `run.timelineWindow` request: the body arrives as JSON from a browser or
 * IPC, so every field is checked here and a wrong one is a 'bad-request' naming the field. The
 * range checks that need the run (from <= to once defaults are filled in) stay with the index
 * (engine/inspect/timeline-window.ts).
 */
import type { WindowQuery } from '../inspect/timeline-window.js';
import { MAX_WINDOW_PX } from '../inspect/timeline-window.js';
import type { Fields } from './request-fields.js';
import { StudioError } from './studio-error.js';

export function timelineWindowQuery(channel: string, req: Fields): WindowQuery {
  const axis = req['axis'] ?? 'seq';
  if (axis !== 'seq' && axis !== 'time') {
    throw new StudioError('bad-request', `${channel}: "axis" must be "seq" or "time", got ${JSON.stringify(axis)}`);
  }
  const query: WindowQuery = { axis };
  for (const field of ['from', 'to'] as const) {
    const value = req[field];
    if (value === undefined || value === null) continue;
    if (typeof value !== 'number' || !Number.isFinite(value)) {
      throw new StudioError('bad-request', `${channel}: "${field}" must be a finite number (${axis === 'seq' ? 'a seq' : 'ms since the run started'}), got ${JSON.stringify(value)}`);
    }
    query[field] = value;
  }
  if (query.from !== undefined && query.to !== undefined && query.from > query.to) {
    throw new StudioError('bad-request', `${channel}: "from" (${query.from}) is after "to" (${query.to}); ask for from <= to`);
  }
  const px = req['px'];
  if (px !== undefined && px !== null) {
    if (typeof px !== 'number' || !Number.isInteger(px) || px < 1 || px > MAX_WINDOW_PX) {
      throw new StudioError('bad-request', `${channel}: "px" must be an integer from 1 to ${MAX_WINDOW_PX} (the window's width in pixels), got ${JSON.stringify(px)}`);
    }
    query.px = px;
  }
  return query;
}
