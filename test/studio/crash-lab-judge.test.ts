/**
 * The crash lab's verdict rules (judgeLab), apart from the processes and proxy that gather what it
 * judges: ✓ only when a crash happened and every check was made and held. A verify that found no
 * divergence but did not compare everything is "not checked", and a write applied twice at the
 * proxy stays ✕ even when the two runs started from different store state.
 */
import { describe, expect, it } from 'vitest';
import { fullyVerified, type VerifyEntry, type VerifyReport } from '../../engine/executor/verify-report.js';
import type { ProxyReport } from '../../engine/server/crash-lab-proxy.js';
import { judgeLab, type LabObservations } from '../../engine/server/crash-lab.js';

const entries = (n: number): VerifyEntry[] =>
  Array.from({ length: n }, (_, i) => ({ seq: i + 1, stepPath: `run/0/${i}`, type: 'http.request', effectId: `e${i}` }));

function verifyReport(over: Partial<VerifyReport> = {}): VerifyReport {
  return { runId: 'armed', ok: true, original: entries(4), replayed: entries(4), divergence: null, unchecked: [], runStatus: 'completed', ...over };
}

function proxyReport(over: Partial<ProxyReport> = {}): ProxyReport {
  return { keys: [{ idempotencyKey: 'armed:k1', requests: 2, effects: 1 }], lost: [], unexpected: [], bodyUnmatched: [], matchedByInput: [], offProxy: [], abandonedServed: [], answered: 3, ...over };
}

function observed(over: Partial<LabObservations> = {}): LabObservations {
  return {
    referenceRunId: 'reference',
    finalStatus: 'completed',
    failures: 0,
    referenceFailures: 0,
    crashes: 1,
    picks: ['after http.request #2'],
    fired: ['after http.request #2'],
    storeDiff: [],
    proxy: proxyReport(),
    verify: verifyReport(),
    startDiffs: [],
    elsewhere: 0,
    ...over,
  };
}

const check = (verdict: ReturnType<typeof judgeLab>, name: string) => verdict.checks.find((c) => c.name === name);

describe('fullyVerified', () => {
  it('is true only for a report with no divergence, something compared, nothing unchecked and every entry re-derived', () => {
    expect(fullyVerified(verifyReport())).toBe(true);
    expect(fullyVerified(verifyReport({ ok: false }))).toBe(false);
    expect(fullyVerified(verifyReport({ unchecked: ['an older log format'] }))).toBe(false);
    expect(fullyVerified(verifyReport({ replayed: entries(3) }))).toBe(false);
    // Nothing compared is no ✓.
    expect(fullyVerified(verifyReport({ original: [], replayed: [] }))).toBe(false);
  });
});

describe('judgeLab', () => {
  it('names a run that went on after failed steps, and passes it only when the crash-free run failed as many', () => {
    const same = judgeLab(observed({ failures: 5, referenceFailures: 5 }));
    expect(check(same, 'completed')).toMatchObject({ ok: true, label: 'the run ended "completed with 5 failure(s)", as the crash-free run did' });
    const more = judgeLab(observed({ failures: 5, referenceFailures: 2 }));
    expect(check(more, 'completed')).toMatchObject({ ok: false, label: 'the run ended "completed with 5 failure(s)", the crash-free run with 2' });
    expect(more.ok).toBe(false);
  });

  it('says ✓ survived when a crash happened and every check held', () => {
    const verdict = judgeLab(observed());
    expect(verdict.ok).toBe(true);
    expect(verdict.checks.every((c) => c.ok === true)).toBe(true);
    expect(verdict.explanation).toMatch(/^survived 1 crash/);
  });

  it('says not tested when no crash happened, whatever held', () => {
    const verdict = judgeLab(observed({ crashes: 0 }));
    expect(verdict).toMatchObject({ ok: false, tested: false });
    expect(verdict.explanation).toContain('after http.request #2 was never reached');
  });

  it('gives no ✓ for a verify that found no divergence but left events unchecked', () => {
    const partly = judgeLab(observed({ verify: verifyReport({ unchecked: ['request bodies of an older log format'] }) }));
    expect(partly.ok).toBe(false);
    expect(check(partly, 'replay')).toMatchObject({ ok: null });
    expect(check(partly, 'replay')!.label).toContain('not checked: request bodies of an older log format');
    expect(partly.explanation).toMatch(/^not fully checked/);

    const short = judgeLab(observed({ verify: verifyReport({ replayed: entries(2) }) }));
    expect(short.ok).toBe(false);
    expect(check(short, 'replay')).toMatchObject({ ok: null });
    expect(check(short, 'replay')!.label).toContain('2 of 4 events re-derived');
  });

  it('gives no ✓ when the verify itself could not be made, and ✕ when it diverged', () => {
    const failedVerify = judgeLab(observed({ verify: 'the mission file is gone' }));
    expect(check(failedVerify, 'replay')).toMatchObject({ ok: null });
    expect(failedVerify.ok).toBe(false);

    const diverged = judgeLab(observed({ verify: verifyReport({ ok: false, divergence: { index: 1, seq: 2, stepPath: 'run/0/1', recorded: 'a', asked: 'b', explanation: 'POST /a became POST /b', cause: 'nondeterminism' } }) }));
    expect(check(diverged, 'replay')).toMatchObject({ ok: false });
    expect(diverged.explanation).toMatch(/^not exactly-once/);
  });

  it('keeps a write applied twice a failure when the runs started from different store state', () => {
    const verdict = judgeLab(observed({
      proxy: proxyReport({ keys: [{ idempotencyKey: 'armed:k1', requests: 2, effects: 2 }] }),
      startDiffs: ['sql store orders read 3 rows, the reference read 0'],
    }));
    expect(verdict.ok).toBe(false);
    expect(verdict.duplicateEffects).toBe(1);
    expect(check(verdict, 'writes')).toMatchObject({ ok: false });
    // What the different start can explain is not compared rather than judged.
    expect(check(verdict, 'stores')).toMatchObject({ ok: null });
    expect(check(verdict, 'requests')).toMatchObject({ ok: null });
    expect(check(verdict, 'same-start')).toMatchObject({ ok: null });
    expect(verdict.explanation).toMatch(/^not exactly-once/);
  });

  it('does not compare lost writes or store differences that a different start explains', () => {
    const verdict = judgeLab(observed({
      proxy: proxyReport({ lost: ['POST /Api/marks'] }),
      storeDiff: [{ path: 'orders/1', change: 'changed', before: 1, after: 2 }],
      startDiffs: ['sync_state read another checkpoint'],
    }));
    expect(check(verdict, 'writes')).toMatchObject({ ok: null });
    expect(check(verdict, 'writes')!.label).toMatch(/^not compared/);
    expect(check(verdict, 'stores')).toMatchObject({ ok: null });
    expect(verdict.ok).toBe(false);
    expect(verdict.explanation).toMatch(/^not fully checked/);
  });

  it('names requests that bypassed the proxy as not compared', () => {
    const verdict = judgeLab(observed({ elsewhere: 2 }));
    expect(check(verdict, 'elsewhere')).toMatchObject({ ok: null });
    expect(verdict.ok).toBe(false);
  });

  it('a chaos lab some of whose picks never fired is "not fully checked", naming them, never "survived"', () => {
    // Helper 64: on a concurrent loop the picks were ordered by the crash-free run's completion
    // order; the armed run passed one before it was armed, no pick after it was ever armed, and
    // the verdict said "survived 5 crash(es)" of 14 picked.
    const verdict = judgeLab(observed({ crashes: 2, picks: ['before-effect:1', 'after-effect:3', 'before-effect:5', 'mid-store:2'], fired: ['before-effect:1', 'after-effect:3'] }));
    expect(verdict.ok).toBe(false);
    expect(check(verdict, 'picks')).toMatchObject({ ok: null, label: expect.stringMatching(/^not tested: 2 of the 4 picked crash point\(s\) never fired \(before-effect:5, mid-store:2\)/) });
    expect(verdict.explanation).toMatch(/^not fully checked after 2 crash\(es\): .*not tested: 2 of the 4 picked/);
    // Every pick fired: no such check.
    expect(check(judgeLab(observed({ crashes: 2, picks: ['a:1', 'a:1'], fired: ['a:1', 'a:1'] })), 'picks')).toBeUndefined();
  });

  it('a read redirected past the proxy, or an answer the crash-free run gave up on, makes requests "not checked" and a store difference "not compared", never ✓ or ✕', () => {
    const offProxy = ['GET /Api/items → http://127.0.0.1:9/elsewhere/items'];
    const redirected = judgeLab(observed({ proxy: proxyReport({ offProxy }) }));
    expect(check(redirected, 'requests')).toMatchObject({ ok: null, label: expect.stringMatching(/^not checked: 1 read\(s\) were redirected to another origin.*elsewhere\/items/) });
    // Equal stores still hold, but the stores check no longer claims the same answers were served.
    expect(check(redirected, 'stores')).toMatchObject({ ok: true });
    expect(check(redirected, 'stores')!.label).not.toMatch(/served the same answers/);
    expect(redirected.ok).toBe(false);
    expect(redirected.explanation).toMatch(/^not fully checked after 1 crash\(es\)/);

    const differs = judgeLab(observed({ proxy: proxyReport({ abandonedServed: ['GET /Api/slow'] }), storeDiff: [{ path: 'stores.items.1.v', before: 1, after: 2, change: 'changed' }] }));
    expect(check(differs, 'stores')).toMatchObject({ ok: null, label: expect.stringMatching(/^not compared: 1 store difference/) });
    expect(check(differs, 'requests')!.label).toMatch(/gave up on \(its timeout\)/);
    expect(differs.explanation).toMatch(/^not fully checked/);

    // Without either, a store difference is a failure.
    const plain = judgeLab(observed({ storeDiff: [{ path: 'stores.items.1.v', before: 1, after: 2, change: 'changed' }] }));
    expect(check(plain, 'stores')!.ok).toBe(false);
    // A request the reference never made stays ✕ whatever else.
    expect(check(judgeLab(observed({ proxy: proxyReport({ offProxy, unexpected: ['GET /Api/x'] }) })), 'requests')!.ok).toBe(false);
  });
});
