/**
 * Durations are bounded at check time (a pause or a wait timeout: at most 36500d, about 100
 * years), and an instant already stored beyond JavaScript's date range (a log written before the
 * bound: `pause { duration: "100000000d" }` passed `check`, suspended, then `reqon show` and the
 * progress line died with `RangeError: Invalid time value`) is shown as milliseconds, never a crash.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { builtCli, describeResult, runCli } from '../durability/support/cli-build.js';
import { instantText } from '../../engine/env/instant-text.js';
import { newRun, openTempLog, started, type TempLog } from './helpers.js';

/** A safe integer of milliseconds that no Date can hold (the range ends at 8.64e15). */
const BEYOND = 9_000_000_000_000_000;

let t: TempLog;

beforeEach(async () => {
  t = await openTempLog();
});

afterEach(async () => {
  await t.cleanup();
});

function mission(option: string): string {
  const file = path.join(t.dir, 'm.vague');
  fs.writeFileSync(file, `mission M {\n  action A {\n    ${option}\n  }\n  run A\n}\n`);
  return file;
}

describe('durations are bounded at check time', () => {
  for (const option of ['pause { duration: "100000000d" }', 'pause { duration: "36501d" }', 'wait { path: "/hook", timeout: 9007199254740991 }']) {
    it(`${option} is refused by check, naming the bound (36500d itself passes)`, async () => {
      const r = await runCli(builtCli(), ['check', mission(option)], { cwd: t.dir });
      expect(r.code, describeResult(r)).toBe(1);
      expect(r.stdout + r.stderr).toMatch(/error\[E3023\]: `(duration|timeout)` expected a duration from 0 to 36500d \(about 100 years\)/);
      const bound = await runCli(builtCli(), ['check', mission('pause { duration: "36500d" }')], { cwd: t.dir });
      expect(bound.code, describeResult(bound)).toBe(0);
    });
  }
});

describe('an instant stored beyond the date range', () => {
  it('reqon show, runs and events print it as milliseconds and exit 0', async () => {
    const { lease } = await t.log.createRun(newRun('r1'), 'w1', 30_000, [started()]);
    await t.log.commit(
      lease,
      [{ kind: 'event', event: { type: 'pause.created', stepPath: 'A/0', payload: { pauseId: 'p1', dueAt: BEYOND }, recordedAt: 2_000 } }],
      { durable: true, status: { status: 'suspended', wakeAt: BEYOND, waitingOn: 'pause:p1', releaseLease: true } },
    );
    for (const args of [['show', 'r1'], ['runs'], ['events', 'r1']]) {
      const r = await runCli(builtCli(), [...args, '--db', t.dbPath], { cwd: t.dir });
      expect(r.code, describeResult(r)).toBe(0);
      expect(r.stderr).not.toMatch(/RangeError|internal error/);
      if (args[0] !== 'events') expect(r.stdout).toContain(`${BEYOND} ms after 1970 (beyond the date range)`);
    }
  });

  it('instantText never throws', () => {
    expect(instantText(0)).toBe('1970-01-01T00:00:00.000Z');
    expect(instantText(BEYOND)).toBe(`${BEYOND} ms after 1970 (beyond the date range)`);
    expect(instantText(Number.NaN)).toContain('beyond the date range');
  });
});
