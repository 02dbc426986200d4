/**
 * GUARANTEES 14: replay checks each delivery a wait took against the wait's eventFilter as the
 * mission has it now. An edit of the filter that would have left the delivery unclaimed verified
 * clean, though the edited mission stays waiting and never runs the steps after the wait. One
 * that would still pass it is not verified either: a delivery the wait refused is not in the run's
 * log, so whether the edit would have taken it instead is not checked (said, not passed).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { verifyRun } from '../../engine/executor/verify.js';
import { fullyVerified } from '../../engine/executor/verify-report.js';
import { openConformance, type Conformance } from '../conformance/harness.js';
import { backends } from '../support/temp-log.js';

const mission = (filter: string) => `mission Waits {
  store got: memory("got")
  action A {
    wait { path: "/hooks/pay", timeout: 60000, eventFilter: ${filter} }
    store response -> got { key: .kind }
  }
  run A
}
`;

let c: Conformance | undefined;
afterEach(async () => {
  await c?.close();
  c = undefined;
});

describe.each(backends)('%s: an edited wait eventFilter', (backend) => {
  it('diverges at a delivery the wait took that the edited filter would have left; one it still passes verifies', async () => {
    c = await openConformance({ backend });
    const files = c.mission('waits', mission('response.kind == "paid"'));
    const started = await c.start(files);
    expect(started.status).toBe('suspended');
    const resumed = await c.resume(started.runId, { payload: { kind: 'paid' } });
    expect(resumed.status).toBe('completed');
    expect(fullyVerified(await verifyRun(c.log, started.runId, { env: c.env }))).toBe(true);
    const still = await verifyRun(c.log, started.runId, { env: c.env, missionFiles: c.mission('still', mission('response.kind != "refund"')) });
    expect(still.divergence).toBeNull();
    // Helper 75: what a wider filter would have taken instead — a delivery the wait refused, which
    // the run's log does not hold — is not checked, and said so, never passed.
    expect(fullyVerified(still)).toBe(false);
    expect(still.unchecked).toEqual([
      "the eventFilter of the waits of action A: the deliveries they refused are not in the run's log, so whether the edited filter would have taken another delivery than the one it took was not checked",
    ]);
    // The same filter written elsewhere is the same filter.
    expect(fullyVerified(await verifyRun(c.log, started.runId, { env: c.env, missionFiles: c.mission('moved', `// moved\n${mission('response.kind  ==  "paid"')}`) }))).toBe(true);
    const report = await verifyRun(c.log, started.runId, { env: c.env, missionFiles: c.mission('edited', mission('response.kind == "refund"')) });
    expect(report.ok).toBe(false);
    expect(report.divergence).toMatchObject({ stepPath: 'A/0', cause: 'edit' });
    expect(report.divergence!.change).toMatch(/^the wait's eventFilter no longer passes the delivery \S+ it took/);
  });
  it('is not checked in an action that ran again (a retried attempt: helper 76 found it verified)', async () => {
    c = await openConformance({ backend });
    let asked = 0;
    c.api.on('GET /status', () => ({ body: { state: ++asked === 1 ? 'pending' : 'ready' } }));
    const retried = (filter: string) => `mission Retried {
  source Api { auth: none, base: "http://127.0.0.1:9" }
  store got: memory("got")
  action A {
    get "/status"
    match response {
      { state: "pending" } -> retry { maxAttempts: 3, delay: 10 },
      _ -> continue
    }
    wait { path: "/hooks/approve", timeout: 60000, eventFilter: ${filter} }
    store response -> got { key: .kind }
  }
  run A
}
`;
    const started = await c.start(c.mission('retried', retried('response.kind == "paid"')));
    expect(started.status).toBe('suspended');
    expect((await c.resume(started.runId, { payload: { kind: 'paid' } })).status).toBe('completed');
    const events = await c.log.read(started.runId);
    expect(events.find((e) => e.type === 'wait.registered')!.stepPath).toMatch(/^A~2\//);
    const report = await verifyRun(c.log, started.runId, { env: c.env, missionFiles: c.mission('wider', retried('response.kind != "refund"')) });
    expect(report.divergence).toBeNull();
    expect(fullyVerified(report)).toBe(false);
    expect(report.unchecked.join('\n')).toContain('the eventFilter of the waits of action A');
  });
});
