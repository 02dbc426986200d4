/**
 * PostgreSQL's `acquire` racing another acquire of the same run: its UPDATE waits for the other's
 * row lock and then skips the row the other took, while the SELECT beside it reads the statement's
 * snapshot — the run as it was, with no owner. Before, the loser was told the run was "owned by
 * (nobody) until now"; it must name the holder that won. The race is made exact here: another
 * connection takes the row and holds its lock until our acquire is seen waiting on it.
 */
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { backends, openTempLog, type TempLog } from '../support/temp-log.js';
import { newRun, started } from './helpers.js';

const pgOnly = backends.filter((b) => b === 'postgres');
let t: TempLog | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

describe.each(pgOnly)('acquire racing another on %s', (backend) => {
  it('the loser names the owner that won, not the row as its snapshot saw it', async () => {
    t = await openTempLog(backend);
    const { lease } = await t.log.createRun(newRun('r1'), 'w1', 60_000, [started()]);
    await t.log.commit(lease, [], { durable: true, status: { status: 'running', wakeAt: null, waitingOn: null, releaseLease: true } });
    expect((await t.log.getRun('r1'))!.owner).toBeNull();

    const rival = new pg.Client({ connectionString: t.target });
    const watcher = new pg.Client({ connectionString: t.target });
    await rival.connect();
    await watcher.connect();
    try {
      await rival.query('BEGIN');
      await rival.query(`UPDATE reqon_runs SET owner = 'w2', lease_epoch = lease_epoch + 1, lease_expires_at = reqon_now_ms() + 60000 WHERE run_id = 'r1'`);
      const acquired = t.log.acquire('r1', 'w3', Date.now(), 60_000);
      // Our statement has its snapshot once it waits for the rival's row lock.
      for (let i = 0; ; i++) {
        const { rows } = await watcher.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'WITH taken AS%'`);
        if ((rows[0] as { n: number }).n > 0) break;
        if (i > 500) throw new Error('the acquire never waited for the rival row lock');
        await new Promise((r) => setTimeout(r, 10));
      }
      await rival.query('COMMIT');
      const result = await acquired;
      expect(result).toMatchObject({ heldBy: 'w2' });
      expect((result as { expiresAt: number }).expiresAt).toBeGreaterThan(Date.now() + 30_000);
    } finally {
      await rival.end();
      await watcher.end();
    }
  });
});
