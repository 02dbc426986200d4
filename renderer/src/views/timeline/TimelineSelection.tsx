/**
 * The strip under the timeline describing the selected seq: its event, and the step bar that
 * contains it (path, type, mission line, duration, status) with what the step did — its requests
 * and their answers, records stored, the failure's message and the body the API answered — and
 * shortcuts to the same position in the State and Events views ("Event →" on a failed step opens
 * the failure, not the step's start). The bar comes from the engine (a point window at the seq), not
 * from the loaded window: a seq picked in another view may lie outside it.
 */
import { useEffect, useMemo, useRef } from 'react';
import type { TimelineWindowBar } from '../../lib/protocol.js';
import { useRequest } from '../../lib/use-request.js';
import { barDuration, formatClock } from '../../lib/time-format.js';
import { summariseStep } from '../../lib/step-summary.js';
import { useStudio } from '../../store/studio-store.js';
import { jsonText, visibleControls } from '../../lib/visible-text.js';

/** The innermost of the bars whose [startSeq, endSeq] contains the seq: the latest start, then the deepest. */
export function innermostBar(bars: readonly TimelineWindowBar[]): TimelineWindowBar | null {
  let best: TimelineWindowBar | null = null;
  for (const bar of bars) {
    if (!best || bar.startSeq > best.startSeq || (bar.startSeq === best.startSeq && bar.depth >= best.depth)) best = bar;
  }
  return best;
}

/** A step's events are read whole up to this many (a loop's bar spans its iterations: its summary is theirs only this far). */
const STEP_EVENTS = 400;

export function TimelineSelection({ runId, lastSeq, seq }: { runId: string; lastSeq: number; seq: number }) {
  const setTab = useStudio((s) => s.setTab);
  const selectSeq = useStudio((s) => s.selectSeq);
  const events = useRequest('run.events', { runId, fromSeq: seq, limit: 1 });
  const around = useRequest('run.timelineWindow', { runId, axis: 'seq', from: seq, to: seq });
  // A running bar closes as the run grows: ask again when the timeline moved on.
  const seenSeq = useRef(lastSeq);
  const reloadAround = around.reload;
  useEffect(() => {
    if (seenSeq.current === lastSeq) return;
    seenSeq.current = lastSeq;
    reloadAround();
  }, [lastSeq, reloadAround]);
  const bar = useMemo(() => innermostBar(around.data?.bars ?? []), [around.data]);
  const event = events.data?.[0];
  const stepEvents = useRequest(
    'run.events',
    bar ? { runId, fromSeq: bar.startSeq, limit: Math.min(STEP_EVENTS, bar.endSeq - bar.startSeq + 1) } : null,
  );
  const summary = useMemo(() => (bar && stepEvents.data ? summariseStep(bar.stepPath, stepEvents.data) : null), [bar, stepEvents.data]);
  const openEvent = () => {
    // The failure of a failed step is its last event: that is what "Event →" shows.
    if (bar?.status === 'failed' && summary?.failure) selectSeq(summary.failure.seq);
    setTab('events');
  };
  return (
    <div className="timeline-selection" aria-label="Selection details">
      <span className="seq-chip">#{seq}</span>
      {/* First, so that nothing fixed at the window's right edge (Open bundle…) covers them. */}
      <button aria-label="Show state at selection" onClick={() => setTab('state')}>
        State here →
      </button>
      <button aria-label="Show event at selection" onClick={openEvent}>
        Event →
      </button>
      {event && (
        <>
          <code className={`event-type type-${event.type.split('.')[0]}`}>{event.type}</code>
          <span className="muted">{formatClock(event.recordedAt)}</span>
        </>
      )}
      {bar && (
        <span className="timeline-selection-step">
          in <strong>{bar.stepType}</strong> <code>{bar.stepPath}</code> · line {bar.line} · {barDuration(bar)} ·{' '}
          <span className={`bar-status-${bar.status}`}>{bar.status}</span>
        </span>
      )}
      {summary && (
        <span className="timeline-selection-did" aria-label="What the step did">
          {summary.requests.map((r) => (
            <code key={r}>{r}</code>
          ))}
          {summary.stored > 0 && <span>{summary.stored} record{summary.stored === 1 ? '' : 's'} stored</span>}
          {summary.failure && <span className="error-text" title={summary.failure.message}>{visibleControls(summary.failure.message)}</span>}
          {summary.failure && summary.failedBody !== undefined && (
            <code className="muted" title="The API's answer">{jsonText(summary.failedBody)?.slice(0, 200)}</code>
          )}
        </span>
      )}
    </div>
  );
}
