/**
 * The open run's header: mission, status, id, counters, and — for a run that is not moving —
 * the wait banner and the resume form. Everything shown is the run's RunSummary as pushed.
 */
import { useStudio } from '../store/studio-store.js';
import { formatDateTime, formatDuration } from '../lib/time-format.js';
import { StatusBadge } from './StatusBadge.js';
import { RunHeaderWaitBanner } from './RunHeaderWaitBanner.js';
import { RunHeaderKill } from './RunHeaderKill.js';
import { RunHeaderShare } from './RunHeaderShare.js';
import { visibleControls } from '../lib/visible-text.js';

export function RunHeader({ runId }: { runId: string }) {
  const run = useStudio((s) => s.runsById[runId]);
  if (!run) {
    return (
      <header className="run-header">
        <div className="run-header-title">
          <h1>{runId}</h1>
          <span className="muted">loading run…</span>
        </div>
      </header>
    );
  }
  return (
    <>
      <header className="run-header" aria-label="Run header">
        <div className="run-header-title">
          <h1>{run.mission}</h1>
          <StatusBadge status={run.status} failures={run.failures} stopped={run.stopped === true} />
          <code className="run-id" aria-label="Run id">
            {run.runId}
          </code>
          <span className="toolbar-spacer" />
          {run.status === 'running' && !run.imported && <RunHeaderKill runId={run.runId} orphaned={run.orphaned === true} />}
        </div>
        <dl className="run-header-stats">
          <div><dt>started</dt><dd>{formatDateTime(run.startedAt)}</dd></div>
          <div><dt>duration</dt><dd>{formatDuration(run.durationMs)}</dd></div>
          <div><dt>events</dt><dd>{run.lastSeq}</dd></div>
          <div><dt>steps</dt><dd>{run.steps}</dd></div>
          <div><dt>effects</dt><dd>{run.effects}</dd></div>
          <div><dt>crashes survived</dt><dd className={run.crashesSurvived > 0 ? 'crash-count' : ''}>{run.crashesSurvived}</dd></div>
          <div><dt>resumes</dt><dd>{run.resumes}</dd></div>
        </dl>
        <RunHeaderShare run={run} />
      </header>
      {run.error && run.status === 'failed' && (
        <div className="banner banner-error" role="alert" aria-label="Run error">
          <strong>Failed:</strong> {visibleControls(run.error)}
        </div>
      )}
      {(run.status === 'suspended' || (run.status === 'running' && run.waitingOn !== null)) && <RunHeaderWaitBanner run={run} />}
    </>
  );
}
