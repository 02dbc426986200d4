/**
 * Every run a query takes, a page at a time (listRuns's keyset cursor, newest first): for the
 * worker and the webhook endpoint, which must see every suspended run, not only the newest page.
 */
import type { EventLog, RunQuery, RunRecord } from '../log/log.js';

export const RUN_PAGE = 500;

/** Pages of the runs `query` takes, newest first; stops after the last (short or empty) page. */
export async function* runPages(log: EventLog, query: RunQuery, pageSize = RUN_PAGE): AsyncGenerator<RunRecord[]> {
  let after: { createdAt: number; runId: string } | undefined;
  for (;;) {
    const page = await log.listRuns({ ...query, limit: pageSize, ...(after ? { after } : {}) });
    if (page.length > 0) yield page;
    const last = page[page.length - 1];
    if (page.length < pageSize || last === undefined) return;
    after = { createdAt: last.createdAt, runId: last.runId };
  }
}
