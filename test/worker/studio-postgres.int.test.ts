/**
 * The studio on the shared PostgreSQL log (`reqon studio --db postgres://…`): its live polling
 * goes through the log contract, so a run started by a worker elsewhere (here: another
 * connection, another simulated machine) is announced (`runs.changed`), its later events pushed
 * (`run.appended`, contiguous seqs), and `runs.list` / `run.events` read it back; mission text
 * the studio saves for a PostgreSQL log goes under the working directory, not beside a URL.
 */
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Pushes, PushChannel } from '../../engine/protocol/protocol.js';
import { forkTextDir } from '../../engine/server/run-sharing.js';
import { createStudioService, type StudioService } from '../../engine/server/studio-service.js';
import { backends, openTempLog, type TempLog } from '../support/temp-log.js';

let temp: TempLog | undefined;
let service: StudioService | undefined;
afterEach(async () => {
  await service?.close();
  service = undefined;
  await temp?.close();
  temp = undefined;
});

const started = (n: number) => ({ type: 'run.started' as const, stepPath: '', payload: { mission: 'Elsewhere', missionHash: 'h', format: 1 }, recordedAt: n });
const step = (i: number) => ({ type: 'step.started' as const, stepPath: `A/${i}`, payload: {}, recordedAt: 1_000 + i }) as never;

describe.each(backends.filter((b) => b === 'postgres'))('the studio on a %s log', (backend) => {
  it('shows runs written by another machine live: announced, appended in order, listed', async () => {
    temp = await openTempLog(backend);
    // A password in the URL (the cluster trusts loopback, so it goes unused) never reaches the page.
    const withPassword = temp.target.replace(/^postgres:\/\/([^@/]+)@/, 'postgres://$1:S3cretPW@');
    expect(withPassword).not.toBe(temp.target);
    service = await createStudioService({ dbPath: withPassword, cliPath: path.join(temp.dir, 'no-cli.mjs'), cwd: temp.dir, pollIntervalMs: 20, prefetchRuns: 0, worker: false });
    const info = await service.handle('studio.info', {});
    expect(info.dbPath).toContain(':***@');
    expect(JSON.stringify(info)).not.toContain('S3cretPW');
    const pushes: { channel: PushChannel; payload: { runId: string } }[] = [];
    service.subscribe((channel, payload) => pushes.push({ channel, payload: payload as { runId: string } }));
    const ofRun = () => pushes.filter((p) => p.payload.runId === 'run-elsewhere');

    const elsewhere = await temp.openAnother();
    const files = { entry: '/m/elsewhere.vague', files: [{ path: '/m/elsewhere.vague', text: 'mission Elsewhere {\n  action A { let x = 1 }\n  run A\n}\n' }] };
    const { lease } = await elsewhere.createRun(
      { runId: 'run-elsewhere', mission: 'Elsewhere', missionHash: 'h', missionFiles: files, options: { sources: {}, env: {} }, createdAt: 1 },
      'machine-b:77:w',
      60_000,
      [started(1)],
    );
    await expect.poll(() => ofRun().map((p) => p.channel), { timeout: 20_000, interval: 20 }).toContain('runs.changed');
    await elsewhere.commit(lease, Array.from({ length: 5 }, (_, i) => ({ kind: 'event' as const, event: step(i) })), { durable: true });
    await elsewhere.commit(lease, [{ kind: 'event', event: step(5) }], { durable: true, status: { status: 'completed' } });
    await expect.poll(() => ofRun().filter((p) => p.channel === 'runs.changed').some((p) => (p.payload as unknown as { status: string }).status === 'completed'), { timeout: 20_000, interval: 20 }).toBe(true);
    const appended = ofRun().filter((p) => p.channel === 'run.appended').map((p) => p.payload as unknown as Pushes['run.appended']);
    const seqs = appended.flatMap((a) => Array.from({ length: a.lastSeq - a.fromSeq + 1 }, (_, i) => a.fromSeq + i));
    // Announced at seq 1 (before the test appended more): everything after it pushed, once, in order.
    expect(seqs).toEqual([2, 3, 4, 5, 6, 7]);

    const listed = (await service.handle('runs.list', {})).runs;
    expect(listed.find((r) => r.runId === 'run-elsewhere')).toMatchObject({ status: 'completed' });
    expect(forkTextDir(temp.target, temp.dir)).toBe(path.join(temp.dir, '.reqon', 'studio-missions'));
  });
});
