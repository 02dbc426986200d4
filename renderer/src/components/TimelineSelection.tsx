/**
 * The strip under the timeline describing the selected seq: its event, and the step bar that
 * contains it (path, type, mission line, duration, status), with shortcuts to the same position
 * in the State and Events views. The bar comes from the engine (a point window at the seq), not
 * from the loaded window: a seq picked in another view may lie outside it.
 */
import { useEffect, useMemo, useRef } from 'react';
import type { TimelineWindowBar } from '../lib/protocol.js';
import { useRequest } from '../lib/use-request.js';
import { formatClock, formatDuration } from '../lib/time-format.js';
import { useStudio } from '../store/studio-store.js';

/** The innermost of the bars whose [startSeq, endSeq] contains the seq: the latest start, then the deepest. */
export function innermostBar(bars: readonly TimelineWindowBar[]): TimelineWindowBar | null {
  let best: TimelineWindowBar | null = null;
  for (const bar of bars) {
    if (!best || bar.startSeq > best.startSeq || (bar.startSeq === best.startSeq && bar.depth >= best.depth)) best = bar;
  }
  return best;
}

export function TimelineSelection({ runId, lastSeq, seq }: { runId: string; lastSeq: number; seq: number }) {
  const setTab = useStudio((s) => s.setTab);
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
  return (
    <div className="timeline-selection" aria-label="Selection details">
      <span className="seq-chip">#{seq}</span>
      {event && (
        <>
          <code className={`event-type type-${event.type.split('.')[0]}`}>{event.type}</code>
          <span className="muted">{formatClock(event.recordedAt)}</span>
        </>
      )}
      {bar && (
        <span className="timeline-selection-step">
          in <strong>{bar.stepType}</strong> <code>{bar.stepPath}</code> · line {bar.line} · {formatDuration(bar.endAt - bar.startAt)} ·{' '}
          <span className={`bar-status-${bar.status}`}>{bar.status}</span>
        </span>
      )}
      <span className="toolbar-spacer" />
      <button aria-label="Show state at selection" onClick={() => setTab('state')}>
        State here →
      </button>
      <button aria-label="Show event at selection" onClick={() => setTab('events')}>
        Event →
      </button>
    </div>
  );
}
