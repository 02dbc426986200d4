/**
 * CrashInjector.turn: armed, an effect in a concurrent branch goes on once every branch before
 * its own has ended — in each construct it is inside (a loop nested in a loop's iteration too) —
 * and only effects whose kind passes the armed point wait. Unarmed, nothing waits.
 */
import { describe, expect, it } from 'vitest';
import { CrashInjector } from '../../engine/journal/crash-points.js';
import { loopConstruct } from '../../engine/journal/step-path.js';

const never = () => {
  throw new Error('no kill expected');
};

/** Whether `p` has settled after the microtasks queued so far ran. */
async function settled(p: Promise<void> | undefined): Promise<boolean> {
  if (p === undefined) return true;
  let done = false;
  void p.then(() => (done = true));
  await new Promise((resolve) => setTimeout(resolve, 0));
  return done;
}

describe('crash point turns among concurrent branches', () => {
  it('unarmed: no construct is tracked and nothing waits', () => {
    const crash = new CrashInjector(null, never);
    expect(crash.enterBranches(loopConstruct('A/0'), ['A/0[0]', 'A/0[1]'])).toBeUndefined();
    expect(crash.turn('request', 'A/0[1]/0')).toBeUndefined();
  });

  it('armed: a later branch waits for the earlier ones; the first never waits; other kinds go on', async () => {
    const crash = new CrashInjector({ point: 'mid-store', occurrence: 5 }, never);
    const turns = crash.enterBranches(loopConstruct('A/0'), ['A/0[0]', 'A/0[1]', 'A/0[2]'])!;
    expect(crash.turn('table-write', 'A/0[0]/1')).toBeUndefined();
    // A request passes no mid-store point: it never waits for that plan.
    expect(crash.turn('request', 'A/0[2]/0')).toBeUndefined();
    const second = crash.turn('table-write', 'A/0[1]/1');
    const third = crash.turn('table-write', 'A/0[2]/1');
    expect(await settled(second)).toBe(false);
    turns.end('A/0[2]'); // out of order: the third ending frees nobody
    expect(await settled(second)).toBe(false);
    turns.end('A/0[0]');
    expect(await settled(second)).toBe(true);
    expect(await settled(third)).toBe(false);
    turns.end('A/0[1]');
    expect(await settled(third)).toBe(true);
    crash.leaveBranches(turns);
    expect(crash.turn('table-write', 'A/0[2]/1')).toBeUndefined();
  });

  it('nested: an inner iteration waits for its earlier siblings and for the outer branches before its own', async () => {
    const crash = new CrashInjector({ point: 'before-effect', occurrence: 9 }, never);
    const outer = crash.enterBranches(loopConstruct('A/0'), ['A/0[0]', 'A/0[1]'])!;
    const inner = crash.enterBranches(loopConstruct('A/0[1]/0'), ['A/0[1]/0[0]', 'A/0[1]/0[1]'])!;
    const firstInner = crash.turn('request', 'A/0[1]/0[0]/0');
    const secondInner = crash.turn('request', 'A/0[1]/0[1]/0');
    inner.end('A/0[1]/0[0]');
    expect(await settled(secondInner)).toBe(false); // outer branch 0 has not ended
    expect(await settled(firstInner)).toBe(false);
    outer.end('A/0[0]');
    expect(await settled(firstInner)).toBe(true);
    expect(await settled(secondInner)).toBe(true);
  });

  it('leaving a construct frees whoever still waits in it', async () => {
    const crash = new CrashInjector({ point: 'before-wait', occurrence: 1 }, never);
    const turns = crash.enterBranches(loopConstruct('A/0'), ['A/0[0]', 'A/0[1]']);
    const waiting = crash.turn('suspension', 'A/0[1]/0');
    expect(await settled(waiting)).toBe(false);
    crash.leaveBranches(turns);
    expect(await settled(waiting)).toBe(true);
  });
});
