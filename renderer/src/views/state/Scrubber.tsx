/**
 * Time travel: a slider over the run's seqs (also ←/→, Shift for ×10, Home/End) and, at each
 * position, the engine's folded RunState — stores, variables, response, checkpoints, pending
 * waits — beside the mission source with the current step's line highlighted. "Compare with…"
 * pins one position and shows run.stateDiff between the pin and the scrubber.
 */
import { useCallback, useEffect, useMemo, useState } from 'react';
import type { ValueSlice, ValueWindow } from '../../lib/protocol.js';
import { useStudio } from '../../store/studio-store.js';
import { knownLastSeq, noEventsReason } from '../../store/runs-slice.js';
import { clampSeq } from '../../store/scrub-slice.js';
import { useRequest } from '../../lib/use-request.js';
import { formatClock } from '../../lib/time-format.js';
import { ScrubberSlider } from './ScrubberSlider.js';
import { ScrubberSource } from './ScrubberSource.js';
import { ScrubberStores } from './ScrubberStores.js';
import { ScrubberDiff } from './ScrubberDiff.js';
import { ScrubberWaits } from './ScrubberWaits.js';
import { ScrubberFailure } from './ScrubberFailure.js';
import { JsonBlock } from '../../components/JsonBlock.js';
import { useSettled } from '../../lib/use-settled.js';


export function Scrubber({ runId }: { runId: string }) {
  const lastSeq = useStudio((s) => knownLastSeq(s, runId));
  const noEvents = useStudio((s) => noEventsReason(s, runId));
  const scrubSeq = useStudio((s) => s.scrubSeq);
  const pinnedSeq = useStudio((s) => s.pinnedSeq);
  const setScrub = useStudio((s) => s.setScrub);
  const stepScrub = useStudio((s) => s.stepScrub);
  const pin = useStudio((s) => s.pin);

  const position = scrubSeq === null ? lastSeq : clampSeq(scrubSeq, lastSeq);
  const settled = useSettled(position, 60);
  // The windows of big arrays the user paged to (the engine sends the first of each by default).
  const [windows, setWindows] = useState<ValueWindow[]>([]);
  useEffect(() => setWindows([]), [runId]);
  const state = useRequest('run.stateAt', settled > 0 ? { runId, seq: settled, ...(windows.length > 0 ? { windows } : {}) } : null);
  const pageTo = useCallback(
    (where: string) => (path: string, from: number) =>
      setWindows((prev) => [...prev.filter((w) => !(w.where === where && w.path === path)), { where, path, from }]),
    [],
  );
  const slicesOf = useMemo(() => {
    const all = state.data?.slices ?? [];
    return (where: string): ValueSlice[] => all.filter((s) => s.where === where);
  }, [state.data]);
  const source = useRequest('run.source', { runId });
  const diff = useRequest('run.stateDiff', pinnedSeq !== null && settled > 0 ? { runId, fromSeq: pinnedSeq, toSeq: settled } : null);

  const onKey = useCallback(
    (e: React.KeyboardEvent) => {
      const big = e.shiftKey ? 10 : 1;
      switch (e.key) {
        case 'ArrowLeft':
          stepScrub(-big, lastSeq);
          break;
        case 'ArrowRight':
          stepScrub(big, lastSeq);
          break;
        case 'Home':
          setScrub(clampSeq(1, lastSeq));
          break;
        case 'End':
          setScrub(lastSeq);
          break;
        default:
          return;
      }
      e.preventDefault();
    },
    [lastSeq, setScrub, stepScrub],
  );

  if (noEvents === 'loading') return <div className="view-loading">Loading run…</div>;
  if (noEvents === 'empty') return <div className="view-loading">This run has no events yet.</div>;
  const runState = state.data;
  const event = runState?.event ?? null;

  return (
    <div className="scrubber" tabIndex={0} onKeyDown={onKey} aria-label="State scrubber">
      <ScrubberSlider
        position={position}
        lastSeq={lastSeq}
        pinnedSeq={pinnedSeq}
        following={scrubSeq === null}
        onChange={setScrub}
        onPin={() => pin(pinnedSeq === null ? position : null)}
      />
      <div className="scrubber-body">
        <ScrubberSource source={source.data} error={source.error?.message ?? null} currentStep={runState?.currentStep ?? null} />
        <div className="scrubber-state" aria-busy={state.loading}>
          {state.error && (
            <div className="error-box" role="alert">
              {state.error.code}: {state.error.message}
            </div>
          )}
          {runState && (
            <>
              <section className="panel" aria-label="Event at position">
                <h3>
                  Event <span className="seq-chip">#{runState.seq}</span>
                  {event && (
                    <>
                      <code className={`event-type type-${event.type.split('.')[0]}`}>{event.type}</code>
                      <span className="muted">{event.stepPath || '(run)'}</span>
                      <span className="muted">{formatClock(event.recordedAt)}</span>
                    </>
                  )}
                  {runState.currentStep && <span className="muted">step {runState.currentStep.stepPath} · line {runState.currentStep.line}</span>}
                </h3>
              </section>
              {runState.failure && <ScrubberFailure failure={runState.failure} slices={slicesOf('failure')} onWindow={pageTo('failure')} />}
              {pinnedSeq !== null ? (
                // Only the answer for these two positions: an earlier one under their numbers said "No differences" where there were 6,501 (helper 83).
                <ScrubberDiff fromSeq={pinnedSeq} toSeq={settled} entries={diff.current ? diff.data : null} error={diff.error?.message ?? null} />
              ) : (
                <>
                  <ScrubberStores stores={runState.stores} slices={slicesOf} onWindow={pageTo} />
                  <div className="panel-row">
                    <section className="panel" aria-label="Variables">
                      <h3>Variables</h3>
                      <JsonBlock value={runState.variables} label="Variables JSON" slices={slicesOf('variables')} onWindow={pageTo('variables')} />
                    </section>
                    <section className="panel" aria-label="Response">
                      <h3>Response</h3>
                      <JsonBlock value={runState.response} label="Response JSON" slices={slicesOf('response')} onWindow={pageTo('response')} />
                    </section>
                  </div>
                  <ScrubberWaits checkpoints={runState.checkpoints} pending={runState.pending} />
                </>
              )}
            </>
          )}
        </div>
      </div>
    </div>
  );
}
