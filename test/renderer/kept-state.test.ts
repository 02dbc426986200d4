/**
 * What the studio keeps across reloads (renderer/src/lib/use-kept-state.ts), against a fake
 * sessionStorage with a quota: values are written once typing pauses (not on each keystroke), read
 * back by a fresh page, and a value that does not fit takes what was kept beside it along, so a
 * reload never shows the edit's tick over the recorded text (helper 98).
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

class QuotaStorage {
  readonly items = new Map<string, string>();
  writes = 0;
  constructor(private readonly quota: number) {}
  get length(): number {
    return this.items.size;
  }
  key(i: number): string | null {
    return [...this.items.keys()][i] ?? null;
  }
  getItem(key: string): string | null {
    return this.items.get(key) ?? null;
  }
  setItem(key: string, value: string): void {
    this.writes++;
    const used = [...this.items].reduce((n, [k, v]) => n + (k === key ? 0 : k.length + v.length), 0);
    if (used + key.length + value.length > this.quota) throw new Error('QuotaExceededError');
    this.items.set(key, value);
  }
  removeItem(key: string): void {
    this.items.delete(key);
  }
}

let storage: QuotaStorage;

beforeEach(() => {
  vi.resetModules();
  vi.useFakeTimers();
  storage = new QuotaStorage(10_000);
  vi.stubGlobal('window', { sessionStorage: storage, addEventListener: () => {} });
});
afterEach(() => {
  vi.useRealTimers();
  vi.unstubAllGlobals();
});

/** A fresh copy of the module: what a reloaded page starts with. */
const page = () => import('../../renderer/src/lib/use-kept-state.js');

describe('kept state across reloads', () => {
  it('is written once typing pauses, and read back by a reloaded page', async () => {
    const kept = await page();
    kept.keepAcrossReloads('replay-diff:r1:edits');
    for (let i = 1; i <= 50; i++) kept.setKept('replay-diff:r1:edits', { m: 'x'.repeat(i) }, {});
    expect(storage.writes).toBe(0);
    vi.advanceTimersByTime(400);
    expect(storage.writes).toBe(1);
    vi.resetModules();
    const reloaded = await page();
    reloaded.keepAcrossReloads('replay-diff:r1:edits');
    expect(reloaded.keptValue('replay-diff:r1:edits', {})).toEqual({ m: 'x'.repeat(50) });
  });

  it('a value over the quota takes its group along: a reload shows the view afresh, not the tick alone', async () => {
    const kept = await page();
    for (const key of ['replay-diff:r1:editing', 'replay-diff:r1:edits', 'crashlab:r1:point']) kept.keepAcrossReloads(key);
    kept.setKept('crashlab:r1:point', 'after-effect', null);
    kept.setKept('replay-diff:r1:editing', true, false);
    kept.setKept('replay-diff:r1:edits', { m: 'small' }, {});
    vi.advanceTimersByTime(400); // typing paused
    expect(storage.getItem('reqon.kept:replay-diff:r1:editing')).toBe('true');
    kept.setKept('replay-diff:r1:edits', { m: 'x'.repeat(20_000) }, {});
    vi.advanceTimersByTime(400); // typing paused
    // In this page it is still there; in storage its group is gone, another view's value stays.
    expect(kept.keptValue('replay-diff:r1:edits', {})).toEqual({ m: 'x'.repeat(20_000) });
    expect([...storage.items.keys()]).toEqual(['reqon.kept:crashlab:r1:point']);
    vi.resetModules();
    const reloaded = await page();
    reloaded.keepAcrossReloads('replay-diff:r1:editing');
    expect(reloaded.keptValue('replay-diff:r1:editing', false)).toBe(false);
  });
});
