/**
 * A long-lived process that holds a run's lease through the log API (test/durability/
 * ownership.int.test.ts): a live owner the CLI must respect until the lease expires, and whose
 * later commit must be fenced out once someone else took the run over.
 *
 *   node lease-holder.js DB RUN_ID TTL_MS [TAKE_OVER_FROM]
 *
 * Prints one JSON line with its lease (or who holds it), then obeys stdin lines: `commit` appends
 * one event under that lease and prints `{"committed":…}` or `{"error":NAME,"message":…}`;
 * `exit` closes the log and exits 0.
 */
import { hostname } from 'node:os';
import { createInterface } from 'node:readline';
import type { Lease } from '../../../engine/log/log.js';
import { openLog } from '../../../engine/log/open-log.js';

async function main(): Promise<void> {
  const [dbPath, runId, ttlText, takeOverFrom] = process.argv.slice(2);
  if (!dbPath || !runId || !ttlText) throw new Error('usage: lease-holder DB RUN_ID TTL_MS [TAKE_OVER_FROM]');
  const log = await openLog(dbPath);
  // Owners are host:pid:nonce; this pid is alive for as long as the test needs the lease live.
  const owner = `${hostname()}:${process.pid}:holder`;
  const acquired = await log.acquire(runId, owner, Date.now(), Number(ttlText), takeOverFrom ? { takeOverFrom } : {});
  console.log(JSON.stringify(acquired));
  if (!('epoch' in acquired)) {
    await log.close();
    return;
  }
  const lease: Lease = acquired;
  for await (const line of createInterface({ input: process.stdin })) {
    if (line === 'commit') {
      try {
        const stored = await log.commit(
          lease,
          [{ kind: 'event', event: { type: 'value.recorded', stepPath: 'holder', payload: { source: 'random', value: 'from the old owner' }, recordedAt: Date.now() } }],
          { durable: true },
        );
        console.log(JSON.stringify({ committed: stored.length }));
      } catch (error) {
        console.log(JSON.stringify({ error: (error as Error).name, message: (error as Error).message }));
      }
    } else if (line === 'exit') {
      break;
    }
  }
  await log.close();
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
  process.exitCode = 1;
});
