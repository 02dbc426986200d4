/**
 * The lab's progress as a stepper (reference → armed → resuming → verifying → done), with the
 * current phase lit and a failed lab marked where it stopped.
 */
import type { CrashLabPhase, CrashLabStatus } from '../../lib/protocol.js';

const ORDER: { phase: CrashLabPhase; label: string }[] = [
  { phase: 'reference', label: 'Reference run' },
  { phase: 'armed', label: 'Armed run' },
  { phase: 'resuming', label: 'Restart + replay' },
  { phase: 'verifying', label: 'Verifying' },
  { phase: 'done', label: 'Verdict' },
];

function rank(phase: CrashLabPhase): number {
  const i = ORDER.findIndex((p) => p.phase === phase);
  return i < 0 ? -1 : i;
}

export function CrashLabPhases({ status }: { status: CrashLabStatus }) {
  const current = rank(status.phase);
  const failed = status.phase === 'failed';
  return (
    <ol className="crash-lab-phases" aria-label="Lab phases" data-phase={status.phase} data-lab-id={status.labId}>
      {ORDER.map((p, i) => {
        const state = failed ? (i === 0 ? 'failed' : 'todo') : i < current ? 'done' : i === current ? (p.phase === 'done' ? 'done' : 'active') : 'todo';
        return (
          <li key={p.phase} className={`phase phase-${state}`} aria-current={i === current ? 'step' : undefined}>
            <span className="phase-dot" aria-hidden="true">{state === 'done' ? '✓' : state === 'failed' ? '✕' : i + 1}</span>
            {p.label}
          </li>
        );
      })}
      <li className="phase-meta">
        <span className="muted">{status.mode === 'chaos' ? 'chaos mode' : `crash at ${status.crashAt ?? '—'}`}</span>
        <span className="muted">lab {status.labId}</span>
      </li>
    </ol>
  );
}
