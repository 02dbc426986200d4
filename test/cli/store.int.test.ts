/**
 * `reqon store RUN STORE`: a store the run's mission does not declare (a typo, or the table's
 * name for the store's) is a usage error naming the declared stores — before, it printed
 * "(store X has no records)" and exit 0, as if the store were empty. A declared store with no
 * records still says so, exit 0. An `--at` past the run's last seq is a usage error too, not the
 * end state shown as if it were that position. Of a store kept across runs (sql), a note on stderr
 * says the list is the run's part only. A run of more `store.write` events than one read holds
 * (the command folds them a page at a time, the store's alone) lists what a fold of its whole log
 * gives, at its end and at a seq in between.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openLog } from '../../engine/log/open-log.js';
import { MemoryStoreState } from '../../engine/stores/memory-fold.js';
import { builtCli, runCli, runIdOf } from '../durability/support/cli-build.js';

let cli: string;
let dir: string;
let runId: string;
const db = () => path.join(dir, 'log.db');
const reqon = (...args: string[]) => runCli(cli, [...args, '--db', db()], { cwd: dir, env: { REQON_DATA_DIR: path.join(dir, 'data') } });

beforeAll(async () => {
  cli = builtCli();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reqon-store-cmd-'));
  fs.writeFileSync(
    path.join(dir, 'm.vague'),
    'mission M {\n  store orders: sql("shop_orders")\n  store later: memory("later")\n  action A {\n    store { id: "o1", n: 1 } -> orders { key: .id }\n  }\n  run A\n}\n',
  );
  const run = await reqon('run', 'm.vague', '--quiet');
  expect(run.code, run.stderr).toBe(0);
  runId = runIdOf(run);
}, 180_000);
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('reqon store', () => {
  it('lists a declared store; an empty declared one says it has no records', async () => {
    const orders = await reqon('store', runId, 'orders', '--json');
    expect(orders.code, orders.stderr).toBe(0);
    expect(JSON.parse(orders.stdout)).toEqual([{ key: 'o1', record: { id: 'o1', n: 1 } }]);
    // A sql store is kept across runs: what this run wrote is not all it holds.
    expect(orders.stderr).toBe(`note: orders is a sql store, kept across runs: this is what run ${runId} wrote to it, not everything it holds\n`);
    const later = await reqon('store', runId, 'later');
    expect(later.code, later.stderr).toBe(0);
    expect(later.stdout).toBe('(store later has no records)\n');
    expect(later.stderr).toBe('');
  });

  it('a store the mission does not declare, or its table name: exit 2, naming the declared stores', async () => {
    for (const name of ['order', 'shop_orders']) {
      for (const json of [[], ['--json']]) {
        const result = await reqon('store', runId, name, ...json);
        expect(result.code, result.stderr).toBe(2);
        expect(result.stdout).toBe('');
        expect(result.stderr).toContain(`declares no store named "${name}" (its stores: orders, later)`);
      }
    }
  });

  it('--at past the run\'s last seq: exit 2, saying how far the run goes; at the last seq itself, the end state', async () => {
    const end = await reqon('store', runId, 'orders', '--json');
    const show = JSON.parse((await reqon('show', runId, '--json')).stdout) as { lastSeq: number };
    const last = show.lastSeq;
    const atLast = await reqon('store', runId, 'orders', '--json', '--at', String(last));
    expect(atLast.code, atLast.stderr).toBe(0);
    expect(atLast.stdout).toBe(end.stdout);
    const past = await reqon('store', runId, 'orders', '--at', String(last + 1));
    expect(past.code).toBe(2);
    expect(past.stdout).toBe('');
    expect(past.stderr).toContain(`--at ${last + 1}: run ${runId} has ${last} events so far`);
  });

  it('--at that is not digits ("" from an unset variable, 0x10, 1e1, -1, 2.5): exit 2, never read as some seq (probe 112 K4)', async () => {
    for (const at of ['', ' ', '0x10', '1e1', '-1', '2.5', '+3']) {
      const result = await reqon('store', runId, 'orders', '--json', '--at', at);
      expect(result.code, `--at ${JSON.stringify(at)}: ${result.stderr}`).toBe(2);
      expect(result.stdout).toBe('');
      expect(result.stderr).toBe(`reqon: --at expects a seq (a whole number ≥ 0), got "${at}"\n`);
    }
  });

  it('of a run longer than one read: what a fold of the whole log gives, at the end and at a seq', async () => {
    fs.writeFileSync(
      path.join(dir, 'long.vague'),
      'mission Long {\n  store a: memory("a")\n  store b: memory("b")\n  action A {\n    for i in range(0, 3100) {\n' +
        '      store { id: i % 2500, v: i } -> a { key: .id }\n      store { id: i, w: i * 2 } -> b { key: .id }\n    }\n  }\n  run A\n}\n',
    );
    const run = await reqon('run', 'long.vague', '--quiet');
    expect(run.code, run.stderr).toBe(0);
    const longId = runIdOf(run);
    const log = await openLog(db());
    const events = await log.read(longId);
    await log.close();
    expect(events.filter((e) => e.type === 'store.write').length).toBe(6200);
    const mid = events[Math.floor(events.length * 0.6)]!.seq;
    for (const at of [undefined, mid]) {
      const oracle = MemoryStoreState.fromEvents(events, at ?? Number.POSITIVE_INFINITY);
      for (const store of ['a', 'b']) {
        const listed = await reqon('store', longId, store, '--json', ...(at === undefined ? [] : ['--at', String(at)]));
        expect(listed.code, listed.stderr).toBe(0);
        expect(JSON.parse(listed.stdout)).toEqual(oracle.list(store));
      }
    }
  }, 120_000);
});
