/**
 * Records the replay corpus (skipped unless UPDATE_CORPUS=1):
 *
 *   UPDATE_CORPUS=1 npx vitest run --config test/vitest.config.ts test/durability/corpus/record.test.ts
 *
 * For every corpus mission (missions.ts): copy the mission into missions/<id>/, run it once with
 * the built CLI and no crash (the reference), read from that log how often the run passes each
 * crash point (engine/inspect/crash-points.ts, the fold the studio offers crash points with),
 * then record one run per crash plan — the first process armed with `--crash-at POINT:N`, killed
 * there, then resumed (`reqon resume`, a pause resumed by hand, a wait given its webhook payload)
 * until it completes or fails; a plan of two crashes arms the first resume too. Each recording
 * is the run's whole log, `reqon events RUN --json`, crash and resumes included.
 *
 * Re-record after an intended change of the event vocabulary; frozen recordings (an older
 * engine's) are kept as they are.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CrashPointsHandler } from '../../../engine/inspect/crash-points.js';
import type { StoredEvent } from '../../../engine/log/events.js';
import { REPO } from '../../support/built-engine.js';
import { builtCli, describeResult, runCli, runIdOf, type CliResult } from '../support/cli-build.js';
import { readRunFacts } from '../support/run-facts.js';
import { parseNdjson, readManifest, writeManifest, type Manifest, type Recording } from './corpus.js';
import { copyMission, CORPUS_DIR, CORPUS_MISSIONS, corpusEntry, type CorpusMission } from './missions.js';

const LOGS = path.join(CORPUS_DIR, 'logs');
const ABOUT =
  'Recorded run logs that every future engine must replay clean (test/durability/replay-corpus.test.ts). ' +
  'Re-record with UPDATE_CORPUS=1 (test/durability/corpus/record.test.ts); frozen entries are an older engine\'s logs.';

interface Recorded {
  runId: string;
  events: StoredEvent[];
  status: Recording['status'];
  options: Recording['options'];
  recordedEntry: string;
}

/** Runs `mission` with `plan` (crash specs for the first process and then each resume) to its end. */
async function record(cli: string, mission: CorpusMission, plan: string[]): Promise<Recorded | { unreached: string }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reqon-corpus-'));
  const apis = await mission.start();
  try {
    const db = path.join(dir, 'reqon.db');
    const env = { REQON_DATA_DIR: path.join(dir, 'data'), ...apis.processEnv };
    const reqon = (args: string[]): Promise<CliResult> => runCli(cli, [...args, '--db', db, '--quiet'], { cwd: dir, env });
    const args = ['run', corpusEntry(mission), ...Object.entries(apis.sources).flatMap(([name, url]) => ['--source', `${name}=${url}`])];
    if (mission.auth !== undefined) {
      fs.writeFileSync(path.join(dir, 'auth.json'), JSON.stringify(mission.auth));
      args.push('--auth', path.join(dir, 'auth.json'));
    }
    // A crash point is counted over the run's whole progress (journal/effects.ts), so a point past
    // a suspension is reached by a later process: each process is armed with the plan's next
    // crash until one dies there.
    const crashes = [...plan];
    let armed = crashes.shift();
    let result = await reqon(armed ? [...args, '--crash-at', armed] : args);
    const runId = runIdOf(result);
    for (let turn = 0; turn < 12; turn++) {
      if (result.signal === 'SIGKILL') armed = crashes.shift();
      else if (result.signal !== null || (result.code !== 0 && result.code !== 10 && result.code !== 1)) throw new Error(describeResult(result));
      const facts = await readRunFacts(db, runId, []);
      if (facts.run.status === 'completed' || facts.run.status === 'failed') {
        if (armed) return { unreached: `${armed}: the run ended without dying there` };
        const { authFile: _auth, crashAt: _crash, ...options } = facts.run.options;
        return { runId, events: facts.events, status: facts.run.status, options, recordedEntry: facts.run.missionFiles.entry };
      }
      const resume = ['resume', runId];
      if (facts.run.status === 'suspended' && facts.run.waitingOn?.startsWith('wait:') && mission.waitPayload !== undefined) {
        resume.push('--payload', JSON.stringify(mission.waitPayload));
      }
      if (armed) resume.push('--crash-at', armed);
      result = await reqon(resume);
    }
    throw new Error(`run ${runId} of ${mission.id} did not end after 12 resumes`);
  } finally {
    await apis.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Crash plans from the reference run: each point at its first, middle and last occurrence, and one crash during a resume. */
function plansFor(reference: StoredEvent[]): string[][] {
  const fold = new CrashPointsHandler();
  fold.reset();
  for (const event of reference) fold.handleEvent(event);
  const plans: string[][] = [[]];
  for (const { point, occurrences } of fold.data()) {
    const picks = point === 'before-effect' || point === 'after-effect' ? [1, Math.ceil(occurrences / 2), occurrences] : [1, occurrences];
    for (const n of [...new Set(picks)]) plans.push([`${point}:${n}`]);
  }
  const effects = fold.data().find((p) => p.point === 'after-effect')?.occurrences ?? 0;
  if (effects >= 2) plans.push([`before-effect:${Math.ceil(effects / 2)}`, `after-effect:${effects}`]);
  return plans;
}

function recordingId(mission: string, plan: string[]): string {
  return `${mission}.${plan.length === 0 ? 'no-crash' : plan.map((p) => p.replace(':', '-')).join('.then.')}`;
}

describe.skipIf(process.env.UPDATE_CORPUS !== '1')('record the replay corpus (UPDATE_CORPUS=1)', () => {
  it('records every corpus mission at its crash points', { timeout: 900_000 }, async () => {
    const cli = builtCli();
    const previous: Manifest | undefined = fs.existsSync(path.join(CORPUS_DIR, 'manifest.json')) ? readManifest() : undefined;
    const frozen = previous?.recordings.filter((r) => r.frozen) ?? [];
    const recordings: Recording[] = [...frozen];
    fs.rmSync(LOGS, { recursive: true, force: true });
    fs.mkdirSync(LOGS, { recursive: true });
    const unreached: string[] = [];
    for (const mission of CORPUS_MISSIONS) {
      copyMission(mission);
      const reference = await record(cli, mission, []);
      if ('unreached' in reference) throw new Error(reference.unreached);
      for (const plan of plansFor(reference.events)) {
        const got = plan.length === 0 ? reference : await record(cli, mission, plan);
        if ('unreached' in got) {
          unreached.push(`${mission.id} ${got.unreached}`);
          continue;
        }
        const id = recordingId(mission.id, plan);
        const log = path.join(LOGS, `${id}.ndjson`);
        fs.writeFileSync(log, got.events.map((e) => JSON.stringify(e)).join('\n') + '\n');
        // What `reqon events --json` would print is what the test reads back: check the round trip.
        expect(parseNdjson(fs.readFileSync(log, 'utf8'))).toEqual(got.events);
        const started = got.events[0]!.payload as { format?: number };
        recordings.push({
          id,
          mission: mission.id,
          entry: path.relative(REPO, corpusEntry(mission)),
          recordedEntry: got.recordedEntry,
          log: path.relative(REPO, log),
          crashes: plan,
          format: started.format ?? 1,
          events: got.events.length,
          status: got.status,
          resumes: got.events.filter((e) => e.type === 'run.resumed').map((e) => (e.payload as { reason: string }).reason),
          options: got.options,
        });
      }
    }
    writeManifest({ about: ABOUT, recordings });
    if (unreached.length > 0) console.warn(`crash points offered by the fold but not reached:\n${unreached.join('\n')}`);
    expect(unreached, 'every crash point the fold offers is one a run dies at (inspect/crash-points.ts invariant)').toEqual([]);
  });
});
