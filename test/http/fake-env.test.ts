import { describe, expect, it } from 'vitest';
import { TransportError } from '../../engine/env/env.js';
import { createFakeEnv, FakeClock, FakeTransport, jsonResponse, SeededRandom } from '../../engine/env/fake-env.js';

describe('FakeClock', () => {
  it('wakes sleepers in due order, each seeing its own due instant', async () => {
    const clock = new FakeClock(1000);
    const woke: [string, number][] = [];
    void clock.sleep(300).then(() => woke.push(['c', clock.now()]));
    void clock.sleep(100).then(() => woke.push(['a', clock.now()]));
    void clock.sleep(200).then(() => woke.push(['b', clock.now()]));
    await clock.advance(150);
    expect(woke).toEqual([['a', 1100]]);
    expect(clock.now()).toBe(1150);
    await clock.advance(1000);
    expect(woke).toEqual([
      ['a', 1100],
      ['b', 1200],
      ['c', 1300],
    ]);
    expect(clock.now()).toBe(2150);
    expect(clock.pending).toBe(0);
  });

  it('lets a woken sleeper sleep again within the same advance', async () => {
    const clock = new FakeClock(0);
    const ticks: number[] = [];
    const loop = (async () => {
      for (let i = 0; i < 3; i++) {
        await clock.sleep(10);
        ticks.push(clock.now());
      }
    })();
    await clock.advance(100);
    await loop;
    expect(ticks).toEqual([10, 20, 30]);
  });

  it('autoAdvance moves time by the slept amount at once and records sleeps', async () => {
    const clock = new FakeClock(0, { autoAdvance: true });
    await clock.sleep(500);
    await clock.sleep(250);
    expect(clock.now()).toBe(750);
    expect(clock.sleeps).toEqual([500, 250]);
  });

  it('an aborted sleep rejects with the signal reason and is forgotten', async () => {
    const clock = new FakeClock(0);
    const ac = new AbortController();
    const p = clock.sleep(1000, ac.signal);
    ac.abort(new Error('stop'));
    await expect(p).rejects.toThrow('stop');
    expect(clock.pending).toBe(0);
  });

  it('refuses to go backwards', async () => {
    await expect(new FakeClock(0).advance(-1)).rejects.toThrow(/back in time/);
  });
});

describe('SeededRandom', () => {
  it('is deterministic per seed and in [0,1)', () => {
    const a = new SeededRandom(42);
    const b = new SeededRandom(42);
    const xs = Array.from({ length: 100 }, () => a.next());
    expect(xs).toEqual(Array.from({ length: 100 }, () => b.next()));
    expect(xs.every((x) => x >= 0 && x < 1)).toBe(true);
    expect(new SeededRandom(43).next()).not.toBe(xs[0]);
  });

  it('makes ids of the documented shape that sort by creation', () => {
    const r = new SeededRandom(7);
    const ids = Array.from({ length: 40 }, () => r.id('run'));
    for (const id of ids) expect(id).toMatch(/^run_[0-9a-hjkmnp-tv-z]{20}$/);
    expect([...ids].sort()).toEqual(ids);
    expect(new SeededRandom(7).id('run')).toBe(ids[0]);
  });
});

describe('FakeTransport and createFakeEnv', () => {
  it('records requests and answers through the handler', async () => {
    const env = createFakeEnv({ handler: (req) => jsonResponse(200, { echo: req.url }, { 'X-Thing': '1' }) });
    const res = await env.http.send({ method: 'GET', url: 'http://x.test/a', headers: { A: 'b' }, timeoutMs: 10 });
    expect(JSON.parse(res.body)).toEqual({ echo: 'http://x.test/a' });
    expect(res.headers['x-thing']).toBe('1');
    expect(env.http.requests.map((r) => r.url)).toEqual(['http://x.test/a']);
  });

  it('passes a TransportError thrown by the handler through', async () => {
    const t = new FakeTransport(() => {
      throw new TransportError('refused', 'network');
    });
    await expect(t.send({ method: 'GET', url: 'http://x.test', headers: {}, timeoutMs: 1 })).rejects.toMatchObject({ code: 'network' });
  });
});
