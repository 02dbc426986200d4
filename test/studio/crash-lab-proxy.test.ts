/**
 * The crash lab's answer proxy against a real loopback API whose answers change on every call:
 * recording forwards and keeps answers, replay serves them again by method and URL in order,
 * a retried Idempotency-Key gets its first answer (counted as one write; named when its body is
 * another), a write under a new key
 * for a request the reference made once is named as unexpected, a reference write never made is
 * lost, and `rewind` hands back a read the crashed process got but never logged.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StoredEvent } from '../../engine/log/events.js';
import { AnswerProxy } from '../../engine/server/crash-lab-proxy.js';
import { FakeApi } from '../support/fake-api.js';

let api: FakeApi;
let serial = 0;

beforeAll(async () => {
  api = await new FakeApi()
    .on('GET /clock', () => ({ body: { tick: ++serial } }))
    .on('GET /clock?*', () => ({ body: { tick: ++serial } }))
    .on('POST /marks', () => ({ status: 201, body: { mark: ++serial } }))
    .on('GET /old', () => ({ status: 302, headers: { location: '/clock' }, body: {} }))
    .on('GET /away', () => ({ status: 301, headers: { location: 'http://127.0.0.1:9/gone' }, body: {} }))
    .start();
});

afterAll(async () => {
  await api.stop();
});

const get = async (base: string, path: string) => (await (await fetch(`${base}${path}`)).json()) as unknown;
const post = async (base: string, path: string, key?: string) => {
  const res = await fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...(key ? { 'idempotency-key': key } : {}) }, body: '{"at":1}' });
  return { status: res.status, body: (await res.json()) as unknown };
};

async function recorded(): Promise<{ proxy: AnswerProxy; base: string; answers: unknown[] }> {
  const proxy = await AnswerProxy.start({ Api: api.url });
  const base = proxy.sources().Api!;
  proxy.recording('ref-run');
  const answers = [await get(base, '/clock'), await get(base, '/clock'), (await post(base, '/marks', 'ref-run:k1')).body, (await post(base, '/marks', 'ref-run:k2')).body];
  proxy.replay();
  proxy.replaying('armed-run');
  return { proxy, base, answers };
}

describe('crash lab answer proxy', () => {
  it('replays the reference answers in order and counts a retried key once', async () => {
    const { proxy, base, answers } = await recorded();
    const upstreamBefore = api.requests.length;
    try {
      expect(await get(base, '/clock')).toEqual(answers[0]);
      expect(await get(base, '/clock')).toEqual(answers[1]);
      expect((await post(base, '/marks', 'armed-run:k1')).body).toEqual(answers[2]);
      // The resume after a crash resends the same key: same answer, one write.
      expect((await post(base, '/marks', 'armed-run:k1')).body).toEqual(answers[2]);
      expect((await post(base, '/marks', 'armed-run:k2')).body).toEqual(answers[3]);
      expect(api.requests.length).toBe(upstreamBefore);
      expect(proxy.report()).toEqual({
        keys: [
          { idempotencyKey: 'armed-run:k1', requests: 2, effects: 1 },
          { idempotencyKey: 'armed-run:k2', requests: 1, effects: 1 },
        ],
        lost: [],
        unexpected: [],
        bodyUnmatched: [],
        matchedByInput: [],
        offProxy: [],
        abandonedServed: [],
        answered: 4,
      });
    } finally {
      await proxy.close();
    }
  });

  it("serves a key retried after a 5xx or 429 the reference's next attempt, as the API answered it", async () => {
    // Helper 64: the API answers each key's first attempt 500 (or 429), its retry 201; the proxy
    // served the 500 to every retry, the armed run failed its write, and the lab said "not exactly-once".
    const tries = new Map<string, number>();
    const flaky = await new FakeApi()
      .on('POST /pay', (req) => {
        const key = String(req.headers['idempotency-key']);
        const n = (tries.get(key) ?? 0) + 1;
        tries.set(key, n);
        return n === 1 ? { status: key.endsWith('k2') ? 429 : 500, body: { error: 'try again' } } : { status: 201, body: { paid: key.split(':')[1] } };
      })
      .start();
    const proxy = await AnswerProxy.start({ Api: flaky.url });
    try {
      const base = proxy.sources().Api!;
      proxy.recording('ref-run');
      for (const k of ['k1', 'k2']) for (let attempt = 0; attempt < 2; attempt++) await post(base, '/pay', `ref-run:${k}`);
      proxy.replay();
      proxy.replaying('armed-run');
      for (const k of ['k1', 'k2']) {
        expect((await post(base, '/pay', `armed-run:${k}`)).status).toBe(k === 'k2' ? 429 : 500);
        expect(await post(base, '/pay', `armed-run:${k}`)).toEqual({ status: 201, body: { paid: k } });
        // Sent again after the success (a crash before it was logged): the success again, one write.
        expect(await post(base, '/pay', `armed-run:${k}`)).toEqual({ status: 201, body: { paid: k } });
      }
      expect(proxy.report()).toMatchObject({
        keys: [
          { idempotencyKey: 'armed-run:k1', requests: 3, effects: 1 },
          { idempotencyKey: 'armed-run:k2', requests: 3, effects: 1 },
        ],
        lost: [],
        unexpected: [],
      });
    } finally {
      await proxy.close();
      await flaky.stop();
    }
  });

  it('names a key sent again with another body: the resend of a write is the logged request again', async () => {
    const { proxy, base, answers } = await recorded();
    try {
      expect((await post(base, '/marks', 'armed-run:k1')).body).toEqual(answers[2]);
      const again = await fetch(`${base}/marks`, { method: 'POST', headers: { 'content-type': 'application/json', 'idempotency-key': 'armed-run:k1' }, body: '{"at":2}' });
      expect(again.status).toBe(201);
      // The same body with its keys in another order and other spacing is the same request.
      await fetch(`${base}/marks`, { method: 'POST', headers: { 'content-type': 'application/json', 'idempotency-key': 'armed-run:k1' }, body: '{ "at": 1 }' });
      const report = proxy.report();
      expect(report.unexpected).toEqual(['POST /Api/marks (Idempotency-Key armed-run:k1) sent again with another body']);
      expect(report.keys).toEqual([{ idempotencyKey: 'armed-run:k1', requests: 3, effects: 1 }]);
    } finally {
      await proxy.close();
    }
  });

  it('answers requests told apart by a header or a body each with its own answer, whatever their order', async () => {
    const proxy = await AnswerProxy.start({ Api: api.url });
    const base = proxy.sources().Api!;
    const ask = async (path: string, headers: Record<string, string>, body?: string) =>
      (await (await fetch(`${base}${path}`, { method: body === undefined ? 'GET' : 'POST', headers, ...(body === undefined ? {} : { body }) })).json()) as unknown;
    try {
      proxy.recording('ref-run');
      const eur = await ask('/clock', { 'x-currency': 'EUR' });
      const usd = await ask('/clock', { 'x-currency': 'USD' });
      const a = await ask('/marks', { 'content-type': 'application/json' }, '{"code":"A"}');
      const b = await ask('/marks', { 'content-type': 'application/json' }, '{"code":"B"}');
      proxy.replay();
      proxy.replaying('armed-run');
      expect(await ask('/clock', { 'x-currency': 'USD' })).toEqual(usd);
      expect(await ask('/clock', { 'x-currency': 'EUR' })).toEqual(eur);
      expect(await ask('/marks', { 'content-type': 'application/json' }, '{"code":"B"}')).toEqual(b);
      expect(await ask('/marks', { 'content-type': 'application/json' }, '{"code":"A"}')).toEqual(a);
      expect(proxy.report()).toMatchObject({ unexpected: [], bodyUnmatched: [], answered: 4 });
    } finally {
      await proxy.close();
    }
  });

  it('says which requests it matched without their body, rather than answer them as if it knew', async () => {
    const proxy = await AnswerProxy.start({ Api: api.url });
    const base = proxy.sources().Api!;
    const send = async (body: string) => (await (await fetch(`${base}/marks`, { method: 'POST', headers: { 'content-type': 'application/json' }, body })).json()) as unknown;
    try {
      proxy.recording('ref-run');
      const first = await send('{"at":"Mon 1"}');
      proxy.replay();
      proxy.replaying('armed-run');
      expect(await send('{"at":"Tue 2"}')).toEqual(first);
      expect(proxy.report()).toMatchObject({ unexpected: [], bodyUnmatched: ['POST /Api/marks'], answered: 1 });
    } finally {
      await proxy.close();
    }
  });

  it('names a write under a fresh key beyond the reference, and a reference write never made', async () => {
    const { proxy, base } = await recorded();
    try {
      await post(base, '/marks', 'armed-run:k1');
      await post(base, '/marks', 'armed-run:k9');
      const third = await post(base, '/marks', 'armed-run:k10');
      expect(third.status).toBe(502);
      const report = proxy.report();
      expect(report.unexpected).toEqual(['POST /Api/marks (Idempotency-Key armed-run:k10)']);
      expect(report.keys.find((k) => k.idempotencyKey === 'armed-run:k10')).toEqual({ idempotencyKey: 'armed-run:k10', requests: 1, effects: 0 });
      expect(report.lost).toEqual([]);
    } finally {
      await proxy.close();
    }
    const second = await recorded();
    try {
      await post(second.base, '/marks', 'armed-run:k1');
      expect(second.proxy.report().lost).toEqual(['POST /Api/marks']);
    } finally {
      await second.proxy.close();
    }
  });

  it('matches a request carrying a now()/timestamp() value where the reference\'s carried its own, and confirms it in the armed log', async () => {
    const T1 = Date.parse('2026-12-02T07:00:00.000Z');
    const T2 = T1 + 60_000;
    const clockOf = (t: number) => [{ type: 'value.recorded', payload: { source: 'now', value: t } }] as unknown as StoredEvent[];
    const logs = new Map<string, StoredEvent[]>([['ref-run', clockOf(T1)], ['armed-run', []]]);
    const proxy = await AnswerProxy.start({ Api: api.url }, async (runId) => logs.get(runId) ?? []);
    const base = proxy.sources().Api!;
    const read = async (at: number) => {
      const res = await fetch(`${base}/clock?at=${encodeURIComponent(new Date(at).toISOString())}&n=1`, { headers: { 'x-sent': String(at) } });
      return { status: res.status, body: (await res.json()) as unknown };
    };
    try {
      proxy.recording('ref-run');
      const first = await read(T1);
      const second = await read(T1);
      proxy.replay();
      proxy.replaying('armed-run');
      // Its own clock value at the reference's places: the reference's answers, in order. The armed
      // run's log does not hold the value yet when the read arrives.
      expect(await read(T2)).toEqual(first);
      // An earlier time than the reference's is no value of a run that started after it.
      expect((await read(T1 - 1)).status).toBe(502);
      // A value at another place than the reference's is no match.
      expect((await fetch(`${base}/clock?at=x&n=${T2}`, { headers: { 'x-sent': String(T2) } })).status).toBe(502);
      expect(await read(T2)).toEqual(second);
      logs.set('armed-run', clockOf(T2));
      const confirmed = proxy.report(logs.get('armed-run'));
      expect(confirmed.matchedByInput).toHaveLength(2);
      expect(confirmed.unexpected).toHaveLength(2);
      // Without the value in the armed run's log, the match is not confirmed: a request the reference never made.
      const unconfirmed = proxy.report(clockOf(T2 + 5));
      expect(unconfirmed.matchedByInput).toEqual([]);
      expect(unconfirmed.unexpected).toHaveLength(4);
      expect(unconfirmed.unexpected[2]).toContain('matched a now()/timestamp() of the reference');
    } finally {
      await proxy.close();
    }
  });

  it('sends a redirect into the source back through the proxy, and one elsewhere as it is', async () => {
    // A run follows a GET's redirect: a root-relative Location passed on unchanged resolved to
    // the proxy's root, outside the source's prefix, and the lab answered it 502.
    const proxy = await AnswerProxy.start({ Api: api.url });
    try {
      const base = proxy.sources().Api!;
      proxy.recording('ref-run');
      const moved = await fetch(`${base}/old`, { redirect: 'manual' });
      expect(moved.status).toBe(302);
      expect(moved.headers.get('location')).toBe(`${base}/clock`);
      expect(await get(base, '/old')).toEqual({ tick: expect.any(Number) as number });
      const away = await fetch(`${base}/away`, { redirect: 'manual' });
      expect(away.headers.get('location')).toBe('http://127.0.0.1:9/gone');
      // Helper 78: the hop elsewhere goes past the proxy, so its answers are not held equal: said so.
      expect(proxy.report().offProxy).toEqual(['GET /Api/away → http://127.0.0.1:9/gone']);
    } finally {
      await proxy.close();
    }
  });

  it("never serves an answer the reference gave up on (its timeout) while its retry's is there, nor counts that attempt a lost write", async () => {
    // Helper 78: an API slower than the mission's timeout. The reference's first attempt timed out,
    // the proxy kept its late answer as one of the reference's, and served it to the armed run in
    // arrival order ("store difference"), or named the timed-out POST a write never made.
    let reads = 0;
    let writes = 0;
    const slow = await new FakeApi()
      .on('GET /feed', async () => {
        const n = ++reads;
        if (n === 1) await new Promise((r) => setTimeout(r, 400));
        return { body: { attempt: n } };
      })
      .on('POST /pay', async () => {
        const n = ++writes;
        if (n === 1) await new Promise((r) => setTimeout(r, 400));
        return { status: 201, body: { attempt: n } };
      })
      .start();
    const proxy = await AnswerProxy.start({ Api: slow.url });
    try {
      const base = proxy.sources().Api!;
      proxy.recording('ref-run');
      const payBody = { method: 'POST', headers: { 'content-type': 'application/json', 'idempotency-key': 'ref-run:k1' }, body: '{"at":1}' };
      await expect(fetch(`${base}/feed`, { signal: AbortSignal.timeout(100) })).rejects.toThrow();
      expect(await get(base, '/feed')).toEqual({ attempt: 2 });
      await expect(fetch(`${base}/pay`, { ...payBody, signal: AbortSignal.timeout(100) })).rejects.toThrow();
      expect(await (await fetch(`${base}/pay`, payBody)).json()).toEqual({ attempt: 2 });
      // Let the abandoned attempts' late answers arrive at the proxy and be recorded.
      await new Promise((r) => setTimeout(r, 500));
      expect([reads, writes]).toEqual([2, 2]);
      proxy.replay();
      proxy.replaying('armed-run');
      expect(await get(base, '/feed')).toEqual({ attempt: 2 });
      expect(await (await post(base, '/pay', 'armed-run:k1')).body).toEqual({ attempt: 2 });
      expect(proxy.report()).toMatchObject({ lost: [], unexpected: [], abandonedServed: [], keys: [{ idempotencyKey: 'armed-run:k1', requests: 1, effects: 1 }] });
      // Asked once more, the only answer left is the one the reference never saw: served, and said.
      expect(await get(base, '/feed')).toEqual({ attempt: 1 });
      expect(proxy.report().abandonedServed).toEqual(['GET /Api/feed']);
    } finally {
      await proxy.close();
      await slow.stop();
    }
  });

  it('serves the armed run, through URLs of its own, what the reference saw, and rewinds its reads', async () => {
    // Its own URLs: a run's checkpoints are per API URL, so it must not share the reference's.
    const { proxy, base, answers } = await recorded();
    try {
      const armed = proxy.sources('armed').Api!;
      expect(armed).not.toBe(base);
      expect(await get(armed, '/clock')).toEqual(answers[0]);
      expect(await get(armed, '/clock')).toEqual(answers[1]);
      const url = `${armed}/clock`;
      const logged = [
        { type: 'http.request', payload: { effectId: 'e1', attempt: 1, request: { method: 'GET', url, headers: {} } } },
        { type: 'http.response', payload: { effectId: 'e1', attempt: 1, response: { status: 200, headers: {}, body: answers[0] } } },
      ] as unknown as StoredEvent[];
      await proxy.rewind(logged);
      expect(await get(armed, '/clock')).toEqual(answers[1]);
      expect((await post(armed, '/marks', 'armed-run:k1')).body).toEqual(answers[2]);
      expect(proxy.report()).toMatchObject({ unexpected: [], answered: 4 });
    } finally {
      await proxy.close();
    }
  });

  it('rewinds a read the crashed process was answered but never logged', async () => {
    const { proxy, base, answers } = await recorded();
    try {
      expect(await get(base, '/clock')).toEqual(answers[0]);
      expect(await get(base, '/clock')).toEqual(answers[1]);
      // The log holds the first read's response only: the process died before logging the second.
      const url = `${base}/clock`;
      const logged = [
        { type: 'http.request', payload: { effectId: 'e1', attempt: 1, request: { method: 'GET', url, headers: {} } } },
        { type: 'http.response', payload: { effectId: 'e1', attempt: 1, response: { status: 200, headers: {}, body: answers[0] } } },
        { type: 'http.request', payload: { effectId: 'e2', attempt: 1, request: { method: 'GET', url, headers: {} } } },
      ] as unknown as StoredEvent[];
      await proxy.rewind(logged);
      expect(await get(base, '/clock')).toEqual(answers[1]);
    } finally {
      await proxy.close();
    }
  });
});
