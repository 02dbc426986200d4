/**
 * The strip under the timeline describing the selected seq: its event, and the step bar that
 * contains it (path, type, mission line, duration, status), with shortcuts to the same position
 * in the State and Events views.
 */
import { useMemo } from 'react';
import type { TimelineBar } from '../lib/protocol.js';
import type { TimelineIndex } from '../lib/timeline-index.js';
import { useRequest } from '../lib/use-request.js';
import { formatClock, formatDuration } from '../lib/time-format.js';
import { useStudio } from '../store/studio-store.js';

/** The innermost bar whose [startSeq, endSeq] contains `seq`. */
function barAt(index: TimelineIndex, seq: number): TimelineBar | null {
  let best: TimelineBar | null = null;
  for (const lane of index.lanes) {
    for (const bar of lane.bars) {
      if (bar.startSeq > seq) break;
      if (bar.endSeq >= seq && (!best || bar.startSeq >= best.startSeq)) best = bar;
    }
  }
  return best;
}

export function TimelineSelection({ runId, index, seq }: { runId: string; index: TimelineIndex; seq: number }) {
  const setTab = useStudio((s) => s.setTab);
  const events = useRequest('run.events', { runId, fromSeq: seq, limit: 1 });
  const bar = useMemo(() => barAt(index, seq), [index, seq]);
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
