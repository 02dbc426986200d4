/**
 * The replay corpus (STYLE.md §10, GUARANTEES 13–14): every recorded run log under
 * corpus/ — the demo mission and the ten §H missions, each crashed at several points and resumed
 * to its end, plus an older engine's log — must replay clean with the mission it was recorded
 * with, on this engine and every later one. A log of an older format replays and says what it
 * could not check; a log of a newer format is refused, and nothing is appended to it.
 *
 * Each log is loaded into a fresh temp log through the log API (support/stored-log.ts), on every
 * log backend (test/support/temp-log.ts) — the recordings are event lists, so a PostgreSQL log
 * takes them as a SQLite one does — and verified in-process with `verifyRun`. Re-record the corpus with UPDATE_CORPUS=1
 * (corpus/record.test.ts).
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createFakeEnv } from '../../engine/env/fake-env.js';
import { continueRun, resumeRun, RunUnavailableError } from '../../engine/executor/run-mission.js';
import { verifyRun } from '../../engine/executor/verify.js';
import { LOG_FORMAT, logFormatOf, type StoredEvent } from '../../engine/log/events.js';
import type { StatusChange } from '../../engine/log/log.js';
import { REPO } from '../support/built-engine.js';
import { backends, type Backend } from '../support/temp-log.js';
import { loadRecording, readManifest, type LoadedRecording } from './corpus/corpus.js';
import { CORPUS_DIR, CORPUS_MISSIONS } from './corpus/missions.js';
import { insertStoredRun, openTempLog, type TempLog } from './support/stored-log.js';
import { builtCli, runCli } from './support/cli-build.js';

const manifest = readManifest();
const META = new Set(['run.started', 'run.resumed']);

let temp: TempLog | undefined;
afterEach(async () => {
  await temp?.close();
  temp = undefined;
});

async function loaded(backend: Backend, rec: LoadedRecording, events: StoredEvent[] = rec.events, status?: StatusChange): Promise<{ temp: TempLog; runId: string }> {
  temp = await openTempLog(backend, {}, 'reqon-corpus-');
  const runId = await insertStoredRun(temp.log, {
    events,
    missionFiles: rec.files,
    options: rec.recording.options,
    ...(status ? { status } : {}),
  });
  return { temp, runId };
}

describe('the corpus is what its manifest says', () => {
  it('lists every log it holds, and each log is the run it describes', () => {
    const listed = new Set(manifest.recordings.map((r) => r.log));
    const onDisk = fs.readdirSync(path.join(CORPUS_DIR, 'logs')).map((f) => path.relative(REPO, path.join(CORPUS_DIR, 'logs', f)));
    for (const file of onDisk) expect(listed, `${file} is in manifest.json`).toContain(file);
    for (const rec of manifest.recordings) {
      const { events } = loadRecording(rec);
      expect(events.length, rec.id).toBe(rec.events);
      expect(events.map((e) => e.seq), `${rec.id}: seqs 1..n`).toEqual(events.map((_, i) => i + 1));
      expect(new Set(events.map((e) => e.runId)).size, `${rec.id}: one run`).toBe(1);
      expect(logFormatOf(events), rec.id).toBe(rec.format);
      expect(events.at(-1)!.type, `${rec.id} ran to its end`).toBe(rec.status === 'completed' ? 'run.completed' : 'run.failed');
      expect(events.filter((e) => e.type === 'run.resumed').map((e) => (e.payload as { reason: string }).reason), rec.id).toEqual(rec.resumes);
      // A crash shows in the log as a resume that took the run over from a dead process.
      if (rec.crashes.length > 0) expect(rec.resumes.filter((r) => r === 'crash').length, rec.id).toBeGreaterThanOrEqual(rec.crashes.length);
    }
  });

  it('covers every demo and conformance mission, each crashed at several points, and an older log format', () => {
    for (const mission of CORPUS_MISSIONS) {
      const crashed = manifest.recordings.filter((r) => r.mission === mission.id && r.crashes.length > 0);
      expect(crashed.length, `${mission.id}: recordings with a crash`).toBeGreaterThanOrEqual(3);
      const points = new Set(crashed.flatMap((r) => r.crashes.map((c) => c.split(':')[0])));
      expect(points.size, `${mission.id}: distinct crash points`).toBeGreaterThanOrEqual(2);
    }
    expect(manifest.recordings.some((r) => r.format === 1)).toBe(true);
    expect(manifest.recordings.some((r) => r.format === LOG_FORMAT)).toBe(true);
  });
});

describe.each(backends)('%s: every stored log replays clean with its mission', (backend) => {
  for (const rec of manifest.recordings) {
    it(`${rec.id} (${rec.events} events, format ${rec.format})`, async () => {
      const stored = loadRecording(rec);
      const { temp, runId } = await loaded(backend, stored);
      const report = await verifyRun(temp.log, runId, { env: createFakeEnv() });
      expect(report.divergence, JSON.stringify(report.divergence)).toBeNull();
      expect(report.ok).toBe(true);
      // Every recorded event was asked for again, exactly once (in log order, or — in concurrent
      // regions — in the order the branches asked).
      const walked = stored.events.filter((e) => !META.has(e.type)).map((e) => e.seq);
      expect(report.original.map((e) => e.seq)).toEqual(walked);
      expect([...report.replayed.map((e) => e.seq)].sort((a, b) => a - b)).toEqual(walked);
      // Format 2 was recorded before header and source identities: everything but the requests'
      // headers and sources was compared, and the report says so. From format 3, nothing is left
      // out but upserts and file-store writes recorded before their planned records were logged.
      const unplanned = stored.events.some((e) => e.type === 'store.write' && (e.payload as { op: string; planned?: unknown }).op === 'upsert' && (e.payload as { planned?: unknown }).planned === undefined);
      if (rec.format >= 3) {
        expect(report.unchecked.filter((u) => !u.startsWith('store records: '))).toEqual([]);
        if (unplanned) expect(report.unchecked).toEqual([expect.stringMatching(/^store records: \d+ upsert\(s\) or write\(s\) to file or PostgREST stores were recorded by an engine before/)]);
      }
      if (rec.format === 2) {
        expect(report.unchecked).toEqual([
          expect.stringMatching(/^requests' headers: \d+ request\(s\) were recorded by an engine before header identities/),
          expect.stringMatching(/^requests' sources: \d+ request\(s\) were recorded by an engine before source identities/),
        ]);
      }
    });
  }
});

describe.each(backends)('%s: log format versions', (backend) => {
  const formatOne = manifest.recordings.find((r) => r.format === 1)!;
  const demo = manifest.recordings.filter((r) => r.format === LOG_FORMAT && r.mission === 'demo');
  const isCrashResume = (e: StoredEvent): boolean => e.type === 'run.resumed' && (e.payload as { reason: string }).reason === 'crash';
  /** The demo recording whose crash left the longest log behind. */
  const crashed = demo
    .filter((r) => r.crashes.length > 0)
    .map((r) => ({ r, at: loadRecording(r).events.findIndex(isCrashResume) }))
    .sort((a, b) => b.at - a.at)[0]!.r;
  const clean = demo.find((r) => r.crashes.length === 0)!;

  it('a format-1 log replays on this engine, and its report names what could not be checked', async () => {
    const stored = loadRecording(formatOne);
    expect(stored.events.some((e) => e.type === 'http.request' && (e.payload as { identity?: unknown }).identity !== undefined)).toBe(false);
    const { temp, runId } = await loaded(backend, stored);
    const report = await verifyRun(temp.log, runId, { env: createFakeEnv() });
    expect(report.ok).toBe(true);
    expect(report.unchecked).toHaveLength(1);
    expect(report.unchecked[0]).toMatch(/URLs and bodies/);
    expect(report.unchecked[0]).toMatch(/log format 1/);
    expect(report.unchecked[0]).toMatch(/only their methods were compared/);
    // \`reqon verify\` gives it no "verified": it says what it could not compare, and exits 3
    // (not 0), so a script that gates on it is not told the run checked out.
    const cli = await runCli(builtCli(), ['verify', runId, '--db', temp.dbPath], { cwd: temp.dir });
    expect(cli.code, cli.stderr).toBe(3);
    expect(cli.stdout).toMatch(/^not fully verified: replaying run \S+ re-derived (\d+) of its \1 events, with no divergence among them\n  not checked: .*log format 1/);
  });

  /** The log as it stood right after its first crash (the resume's events left out), made format 99. */
  function newerFormat(events: StoredEvent[], upTo: (e: StoredEvent) => boolean): StoredEvent[] {
    const end = events.findIndex(upTo);
    expect(end).toBeGreaterThan(1);
    return events.slice(0, end).map((e, i) => (i === 0 ? { ...e, payload: { ...(e.payload as object), format: 99 } } : e) as StoredEvent);
  }

  it('a crashed run whose log says format 99 is refused by continueRun and resumeRun ("newer engine"), and nothing is appended', async () => {
    const stored = loadRecording(crashed);
    const events = newerFormat(stored.events, isCrashResume);
    const { temp, runId } = await loaded(backend, stored, events, { status: 'running' });
    const deps = { log: temp.log, env: createFakeEnv(), dataDir: path.join(temp.dir, 'data'), progress: () => {} };
    // verify refuses it too: it would check a newer log by rules it does not know (a false ✓).
    for (const attempt of [() => continueRun(runId, {}, deps), () => resumeRun(runId, {}, deps), () => verifyRun(temp.log, runId, { env: deps.env })]) {
      const error = await attempt().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(RunUnavailableError);
      expect((error as RunUnavailableError).reason).toBe('unreadable');
      expect((error as Error).message).toMatch(new RegExp(`format 99 by a newer engine; this one reads formats 1–${LOG_FORMAT}`));
      expect((await temp.log.read(runId)).length).toBe(events.length);
      const run = (await temp.log.getRun(runId))!;
      expect(run.status).toBe('running');
      expect(run.owner).toBeNull();
    }
  });

  // The format is checked before anything is spent on the run: a pause's compare-and-set included.
  it('a suspended run whose log says format 99 is refused by resumeRun, and its pause is not spent', async () => {
    const stored = loadRecording(clean);
    const events = newerFormat(stored.events, (e) => e.type === 'pause.resumed');
    const created = [...events].reverse().find((e) => e.type === 'pause.created')!.payload as { pauseId: string; dueAt: number };
    const { temp, runId } = await loaded(backend, stored, events, { status: 'suspended', waitingOn: `pause:${created.pauseId}`, wakeAt: created.dueAt });
    const deps = { log: temp.log, env: createFakeEnv(), dataDir: path.join(temp.dir, 'data'), progress: () => {} };
    const error = await resumeRun(runId, { by: 'cli' }, deps).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(RunUnavailableError);
    expect((error as RunUnavailableError).reason).toBe('unreadable');
    expect((await temp.log.read(runId)).length).toBe(events.length);
    expect((await temp.log.getRun(runId))!.status).toBe('suspended');
  });
});
