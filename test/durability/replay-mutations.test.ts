/**
 * Mutation tests over the replay corpus (STYLE.md §10, GUARANTEES 14): a stored log verified
 * against a mission edited at one of its recorded effects must diverge, and name the step.
 *
 * Cases are generated from the corpus (corpus/mutate.ts): for each step that recorded an HTTP
 * request or a store batch, one edit per kind — the request's URL, its method, a body field, the
 * store it writes to, its place among its siblings, its removal — each one string edit of the
 * stored mission text. A new corpus recording gets its cases without new test code.
 *
 * Representative subset: per mission, its crash-free recording and its recording with the most
 * crashes (the one crashed during a resume too), and the older engine's format-1 log. Verify is
 * in-process; one temp log per recording and backend serves all its cases — on every log backend
 * (test/support/temp-log.ts), as each hands the recorded events back to the replay.
 *
 * And the other half of GUARANTEES 14: a step added after the last recorded step verifies clean
 * and `resumeRun` carries on with it to the end.
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFakeEnv } from '../../engine/env/fake-env.js';
import { createRealEnv } from '../../engine/env/real-env.js';
import { resumeRun } from '../../engine/executor/run-mission.js';
import { verifyRun } from '../../engine/executor/verify.js';
import type { StoredEvent } from '../../engine/log/events.js';
import { backends, type Backend } from '../support/temp-log.js';
import { loadRecording, readManifest, withText, type LoadedRecording, type Recording } from './corpus/corpus.js';
import { CORPUS_MISSIONS } from './corpus/missions.js';
import { appendAfterLastRecorded, mutationsOf, type Mutation } from './corpus/mutate.js';
import { insertStoredRun, openTempLog, type TempLog } from './support/stored-log.js';

const manifest = readManifest();

function subset(): Recording[] {
  const picked: Recording[] = [];
  for (const mission of new Set(manifest.recordings.map((r) => r.mission))) {
    const of = manifest.recordings.filter((r) => r.mission === mission);
    const clean = of.find((r) => r.crashes.length === 0);
    const most = [...of].sort((a, b) => b.crashes.length - a.crashes.length || b.resumes.length - a.resumes.length)[0];
    for (const r of [clean, most]) if (r && !picked.includes(r)) picked.push(r);
  }
  return picked;
}

/** A loaded recording in its own temp log, opened before its cases and closed after them. */
function withStoredLog(rec: Recording, backend: Backend): { stored: LoadedRecording; get: () => { temp: TempLog; runId: string } } {
  const stored = loadRecording(rec);
  let temp: TempLog;
  let runId: string;
  beforeAll(async () => {
    temp = await openTempLog(backend, {}, 'reqon-mutations-');
    runId = await insertStoredRun(temp.log, { events: stored.events, missionFiles: stored.files, options: rec.options });
  });
  afterAll(async () => {
    await temp?.close();
  });
  return { stored, get: () => ({ temp, runId }) };
}

const counted: Record<string, number> = {};

for (const backend of backends) {
  for (const rec of subset()) {
    describe(`${backend}: mutations of ${rec.id} (format ${rec.format})`, () => {
      const { stored, get } = withStoredLog(rec, backend);
      const mutations = mutationsOf(stored.text, stored.files.entry, stored.events);

      it('has mutation cases for its recorded effects', () => {
        expect(mutations.length).toBeGreaterThan(0);
      });

      for (const m of mutations) {
        counted[m.kind] = (counted[m.kind] ?? 0) + 1;
        // A format-1 log holds no request identities: only the method of a recorded request can be
        // compared, and the report says so (`unchecked`) instead of claiming more.
        const blind = rec.format < 2 && (m.kind === 'url' || m.kind === 'body');
        const title = `${m.kind} at ${m.stepPath} (${m.stepType}, line ${m.line}: ${m.edit}) ${blind ? 'cannot be checked, and the report says so' : `diverges at ${m.expectedAt}`}`;
        it(title, async () => {
          const { temp, runId } = get();
          const report = await verifyRun(temp.log, runId, { env: createFakeEnv(), missionFiles: withText(stored.files, m.text) });
          if (blind) {
            expect(report.ok).toBe(true);
            expect(report.unchecked.join(' ')).toMatch(/URLs and bodies/);
            return;
          }
          expect(report.ok, `verify passed the edit: ${m.edit}`).toBe(false);
          const d = report.divergence!;
          expect(d.cause).toBe('edit');
          expectDivergenceAt(m, d, stored.events);
          if (m.stepType === 'Fetch' && (m.kind === 'url' || m.kind === 'method' || m.kind === 'body')) {
            // A changed request is named as the user edited it: its line and the request change.
            expect(d.line).toBe(m.line);
            expect(d.change).toMatch(m.kind === 'body' ? /the body of \w+ \S+ changed/ : /\S+ became \S+/);
          }
        });
      }
    });
  }
}

/**
 * Where the divergence must be. For url/method/body/store the walk reaches the mutated step at
 * its first recorded execution and its first event there differs. For order and remove,
 * `expectedAt` is the first execution of the earlier position the edit changed; the walk finds
 * another step there, and either that step asks for an event the log does not hold at that path
 * (the report names the path), or it asks for one inside itself that the log never recorded (a
 * loop's first iteration, a match arm) — which is still that position: the report names a path
 * under it, `expectedAt` followed by `[`, `>`, `!` or `/`. A removed step that was the last of
 * its block leaves its own events unasked: either the walk ends and the first of them is
 * reported (`expectedAt`), or, leaving the block early, it asks at the block's own path for what
 * the removed step would have led to (an action's checkpoint) and the log holds the block's end
 * there (`orAt`). A `call` given another operation fails before its request is built (the
 * operation's path names a variable the step does not have): a divergence at the step, not a
 * request change, so only a `get`/`post`… edit is held to name its line and change.
 */
function expectDivergenceAt(m: Mutation, d: NonNullable<Awaited<ReturnType<typeof verifyRun>>['divergence']>, events: StoredEvent[]): void {
  if (m.kind === 'order' || m.kind === 'remove') {
    const under = d.stepPath === m.expectedAt || (d.stepPath.startsWith(m.expectedAt) && /^[[>!/]/.test(d.stepPath.slice(m.expectedAt.length)));
    const atBlock = m.orAt !== undefined && d.stepPath === m.orAt;
    expect(under || atBlock, `divergence at ${d.stepPath}, expected at or under ${m.expectedAt}${m.orAt !== undefined ? ` or at ${m.orAt}` : ''}`).toBe(true);
  } else {
    expect(d.stepPath).toBe(m.expectedAt);
  }
  // Nothing before the edited position was reported: the recorded event named is at or after it.
  const seq = d.seq;
  expect(seq, `recorded seq ${seq} ≥ first event of ${m.expectedAt} (${m.expectedSeq})`).toBeGreaterThanOrEqual(m.expectedSeq);
  expect(events.find((e) => e.seq === seq)).toBeDefined();
}

// What a store step writes is compared on replay, not only which store and key (store-step.ts
// sameRecord): editing a stored field before the last recorded step diverges at that store step.
it.each(backends)('%s: an edited stored record diverges at its store step (demo.no-crash, confirmations)', async (backend) => {
  const rec = manifest.recordings.find((r) => r.id === 'demo.no-crash')!;
  const stored = loadRecording(rec);
  const text = stored.text.replace('status: response.status }', 'status: "mutated" }');
  expect(text).not.toBe(stored.text);
  const temp = await openTempLog(backend, {}, 'reqon-mutations-');
  try {
    const runId = await insertStoredRun(temp.log, { events: stored.events, missionFiles: stored.files, options: rec.options });
    const report = await verifyRun(temp.log, runId, { env: createFakeEnv(), missionFiles: withText(stored.files, text) });
    expect(report.ok).toBe(false);
    expect(report.divergence?.stepPath).toBe('Sync/1[0]/4');
  } finally {
    await temp.close();
  }
});

describe('mutation coverage', () => {
  it('every kind of mutation ran, on every corpus mission', () => {
    for (const kind of ['url', 'method', 'body', 'store', 'order', 'remove']) expect(counted[kind] ?? 0, kind).toBeGreaterThan(0);
    expect(subset().length).toBeGreaterThanOrEqual(CORPUS_MISSIONS.length);
  });
});

describe.each(backends)('%s: a step added after the last recorded step', (backend) => {
  // Every crashed recording, cut where it crashed (the log as the dead process left it).
  const cases = manifest.recordings
    .filter((r) => r.crashes.length > 0 && r.format >= 2)
    .map((rec) => {
      const stored = loadRecording(rec);
      const crash = stored.events.findIndex((e) => e.type === 'run.resumed' && (e.payload as { reason: string }).reason === 'crash');
      const prefix = stored.events.slice(0, crash);
      return { rec, stored, prefix, edit: appendAfterLastRecorded(stored.text, stored.files.entry, prefix) };
    })
    .filter((c) => c.edit !== undefined);
  const streamed = cases.filter((c) => c.edit!.breaksStreamedSync);
  const plain = cases.filter((c) => !c.edit!.breaksStreamedSync);

  it('applies to most crashed recordings', () => {
    expect(plain.length).toBeGreaterThan(20);
    expect(streamed.length).toBeGreaterThan(0);
  });

  async function verifyAppended(c: (typeof cases)[number]): Promise<Awaited<ReturnType<typeof verifyRun>>> {
    const temp = await openTempLog(backend, {}, 'reqon-append-');
    try {
      const runId = await insertStoredRun(temp.log, { events: c.prefix, missionFiles: c.stored.files, options: c.rec.options, crashed: true });
      return await verifyRun(temp.log, runId, { env: createFakeEnv(), missionFiles: withText(c.stored.files, c.edit!.text) });
    } finally {
      await temp.close();
    }
  }

  // GUARANTEES 14: this edit carries on. When the last recorded step is the `store response -> S`
  // that ends an action right after a paginated fetch — a streamed sync (GUARANTEES 15) — a step
  // added after it would make the mission gather the pair instead; the replay follows the log
  // (journal.recordedAsStreamed), so the recorded pair replays streamed, as it ran.
  it(`a step added after a streamed sync verifies clean (${streamed.map((c) => c.rec.id).join(', ')})`, async () => {
    for (const c of streamed) {
      const report = await verifyAppended(c);
      expect(report.divergence, `${c.rec.id}: ${JSON.stringify(report.divergence)}`).toBeNull();
    }
  });

  for (const c of plain) {
    it(`${c.rec.id}: after ${c.edit!.after} (line ${c.edit!.line}) verifies clean`, async () => {
      const report = await verifyAppended(c);
      expect(report.divergence, JSON.stringify(report.divergence)).toBeNull();
      expect(report.ok).toBe(true);
    });
  }

  // Carried on live: the demo's crashed recordings against a fresh demo API. The log's origin is
  // the recorder's API (a port long gone): its URLs are moved to the new API's, as a `--source`
  // override would have named it — the request identities compare URLs, origin included.
  const demo = CORPUS_MISSIONS.find((m) => m.id === 'demo')!;
  for (const c of plain.filter((x) => x.rec.mission === 'demo')) {
    it(`${c.rec.id}: resumeRun with the step added carries on to the end, each effect applied once`, async () => {
      const apis = await demo.start();
      const temp = await openTempLog(backend, {}, 'reqon-append-');
      try {
        const from = c.rec.options.sources.Shop!;
        const to = apis.sources.Shop!;
        const moved = JSON.parse(JSON.stringify(c.prefix).split(from).join(to)) as StoredEvent[];
        const runId = await insertStoredRun(temp.log, {
          events: moved,
          missionFiles: c.stored.files,
          options: { ...c.rec.options, sources: { Shop: to } },
          crashed: true,
        });
        const deps = { log: temp.log, env: createRealEnv({}), dataDir: path.join(temp.dir, 'data'), progress: () => {} };
        const edited = withText(c.stored.files, c.edit!.text);
        let result = await resumeRun(runId, { missionFiles: edited }, deps);
        // The demo pauses for 3 s: resumed by hand, as the recorder did.
        for (let i = 0; i < 3 && result.status === 'suspended'; i++) result = await resumeRun(runId, { by: 'cli' }, deps);
        expect(result.status, JSON.stringify(result)).toBe('completed');

        const events = await temp.log.read(runId);
        const live = events.slice(moved.length);
        expect(live.filter((e) => e.type === 'step.started' && (e.payload as { line: number }).line === c.edit!.line)).toHaveLength(1);
        // The edit became the run's mission with its first commit.
        expect((live[0]!.payload as { missionHash?: string }).missionHash).toBe((await temp.log.getRun(runId))!.missionHash);
        // Each POST got its answer once over the whole run: none answered before the crash was sent again.
        const answered = new Map<string, number>();
        for (const e of events) {
          if (e.type !== 'http.response') continue;
          const p = e.payload as { effectId: string; verdict: string };
          if (p.verdict === 'success') answered.set(p.effectId, (answered.get(p.effectId) ?? 0) + 1);
        }
        expect([...answered.values()].every((n) => n === 1)).toBe(true);
        const report = await verifyRun(temp.log, runId, { env: createFakeEnv() });
        expect(report.divergence, JSON.stringify(report.divergence)).toBeNull();
      } finally {
        await temp.close();
        await apis.stop();
      }
    });
  }
});
