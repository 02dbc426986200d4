/**
 * `runs.list`: the request's fields checked and turned into the log's RunQuery. The runs table's
 * status filter tells a completed run that went on after failures from a clean one, which only a
 * `step.failed` in its log says (RunQuery.failedSteps).
 */
import { RUN_STATUSES, type ListRunsOptions } from '../log/log.js';
import { MAX_QUERY_TEXT } from '../log/run-query.js';
import type { RunsStatusFilter } from '../protocol/protocol.js';
import { optInt, type Fields } from './request-fields.js';
import { StudioError } from './studio-error.js';

export const RUNS_PAGE_DEFAULT = 200;
export const RUNS_PAGE_MAX = 1000;
const STATUS_FILTERS: readonly RunsStatusFilter[] = [...RUN_STATUSES, 'completed-with-failures'];

export function runsListQuery(channel: string, req: Fields): ListRunsOptions & { limit: number; offset: number } {
  const limit = Math.min(optInt(channel, req, 'limit', 1) ?? RUNS_PAGE_DEFAULT, RUNS_PAGE_MAX);
  const offset = optInt(channel, req, 'offset', 0) ?? 0;
  const out: ListRunsOptions & { limit: number; offset: number } = { limit, offset };
  const status = req.status;
  if (status !== undefined && status !== null) {
    if (!STATUS_FILTERS.includes(status as RunsStatusFilter)) {
      throw new StudioError('bad-request', `${channel}: "status" must be one of ${STATUS_FILTERS.join(', ')}`);
    }
    if (status === 'completed-with-failures') Object.assign(out, { status: 'completed', failedSteps: true });
    else if (status === 'completed') Object.assign(out, { status: 'completed', failedSteps: false });
    else out.status = status as ListRunsOptions['status'];
  }
  const text = req.text;
  if (text !== undefined && text !== null && text !== '') {
    if (typeof text !== 'string' || text.length > MAX_QUERY_TEXT) throw new StudioError('bad-request', `${channel}: "text" must be a string of at most ${MAX_QUERY_TEXT} characters`);
    out.text = text;
  }
  const oldest = req.oldestFirst;
  if (oldest !== undefined && oldest !== null) {
    if (typeof oldest !== 'boolean') throw new StudioError('bad-request', `${channel}: "oldestFirst" must be true or false`);
    out.oldestFirst = oldest;
  }
  return out;
}
