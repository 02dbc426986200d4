/**
 * The crash lab's stepper marks what the lab's record shows happened. A lab whose armed run never
 * crashed showed "✓ Restart + replay ✓ Verifying" above its "not tested" verdict, and a lab that
 * gave up after its resumes showed "✕ Reference run" although the reference run had completed.
 */
import { describe, expect, it } from 'vitest';
import { crashLabPhaseMarks } from '../../renderer/src/lib/crash-lab-phases.js';
import type { CrashLabProcess, CrashLabStatus, CrashLabVerdict } from '../../renderer/src/lib/protocol.js';

const proc = (command: 'run' | 'resume', signal: string | null, code: number | null = signal ? null : 0): CrashLabProcess => ({ pid: 1, command, crashAt: null, signal, code, fired: false, lastSeq: 9 });
const verdict = (over: Partial<CrashLabVerdict>): CrashLabVerdict =>
  ({ ok: true, tested: true, checks: [], storesEqual: true, storeDiff: [], effects: [], duplicateEffects: 0, crashes: 1, finalStatus: 'completed', explanation: '', ...over }) as CrashLabVerdict;
const status = (over: Partial<CrashLabStatus>): CrashLabStatus =>
  ({ labId: 'l', mode: 'single', phase: 'reference', runId: null, referenceRunId: 'ref', crashAt: 'after-effect:4', picks: [], processes: [], verdict: null, error: null, ...over }) as CrashLabStatus;

describe('the crash lab stepper', () => {
  it('ticks every phase of a lab that crashed, restarted and verified', () => {
    expect(crashLabPhaseMarks(status({ phase: 'done', processes: [proc('run', 'SIGKILL'), proc('resume', null)], verdict: verdict({}) }))).toEqual(['done', 'done', 'done', 'done', 'done']);
  });

  it('ticks no restart and no verifying when no crash happened', () => {
    const marks = crashLabPhaseMarks(status({ phase: 'done', processes: [proc('run', null)], verdict: verdict({ ok: false, tested: false, crashes: 0 }) }));
    expect(marks).toEqual(['done', 'done', 'skipped', 'skipped', 'done']);
  });

  it('marks a failed lab where it stopped', () => {
    const gaveUp = status({ phase: 'failed', processes: [proc('run', 'SIGKILL'), proc('resume', 'SIGKILL'), proc('resume', 'SIGKILL')], error: 'did not finish after 25 resumes' });
    expect(crashLabPhaseMarks(gaveUp)).toEqual(['done', 'done', 'failed', 'todo', 'todo']);
    expect(crashLabPhaseMarks(status({ phase: 'failed', error: 'the reference run failed' }))).toEqual(['failed', 'todo', 'todo', 'todo', 'todo']);
  });

  it('lights the phase under way and nothing after it', () => {
    expect(crashLabPhaseMarks(status({ phase: 'armed', processes: [proc('run', null, null)] }))).toEqual(['done', 'active', 'todo', 'todo', 'todo']);
    expect(crashLabPhaseMarks(status({ phase: 'resuming', processes: [proc('run', 'SIGKILL'), proc('resume', null, null)] }))).toEqual(['done', 'done', 'active', 'todo', 'todo']);
  });
});
