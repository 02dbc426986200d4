/**
 * The virtualised event list: seq, type, step path, what the event says, time and the gap since
 * the row above. Rows are the filter's matches (every event when there is none); rows not loaded
 * yet show a placeholder and ask for their page; ↑/↓ move the selection among the rows. The step
 * column is resized by dragging its edge (the width is remembered) and shows the full path on hover.
 */
import { useEffect, useRef } from 'react';
import { useVirtualizer } from '@tanstack/react-virtual';
import type { EventRows } from '../../lib/use-event-search.js';
import { eventLine } from '../../lib/event-line.js';
import { formatClock, formatDuration } from '../../lib/time-format.js';
import { useStoredWidth } from '../../lib/use-stored-width.js';
import { ResizeHandle } from '../../components/ResizeHandle.js';

const ROW = 22;

interface Props {
  rows: EventRows;
  selectedSeq: number | null;
  onSelect: (seq: number) => void;
  /** A row to bring into view (a new object each time, so the same row can be asked for twice). */
  scrollTo: { row: number } | null;
}

export function EventInspectorList({ rows, selectedSeq, onSelect, scrollTo }: Props) {
  const scrollRef = useRef<HTMLDivElement>(null);
  const listRef = useRef<HTMLElement>(null);
  const stepWidth = useStoredWidth('reqon.events.stepColumn', 180, 80, 640);
  const virtualizer = useVirtualizer({ count: rows.total, getScrollElement: () => scrollRef.current, estimateSize: () => ROW, overscan: 20 });
  const items = virtualizer.getVirtualItems();
  const firstRow = items[0]?.index ?? 0;
  const lastRow = items[items.length - 1]?.index ?? 0;

  useEffect(() => {
    if (rows.total > 0) rows.ensure(firstRow, lastRow);
  }, [firstRow, lastRow, rows.total, rows.ensure]); // eslint-disable-line react-hooks/exhaustive-deps

  useEffect(() => {
    if (scrollTo !== null && scrollTo.row < rows.total) virtualizer.scrollToIndex(scrollTo.row, { align: 'auto' });
  }, [scrollTo]); // eslint-disable-line react-hooks/exhaustive-deps

  const onKey = (e: React.KeyboardEvent) => {
    const d = e.key === 'ArrowDown' ? 1 : e.key === 'ArrowUp' ? -1 : e.key === 'PageDown' ? 20 : e.key === 'PageUp' ? -20 : 0;
    if (d === 0 || rows.total === 0) return;
    e.preventDefault();
    const at = selectedSeq === null ? undefined : rows.rowOf(selectedSeq);
    const next = Math.min(rows.total - 1, Math.max(0, at === undefined ? 0 : at + d));
    const event = rows.get(next);
    if (event) {
      onSelect(event.seq);
      virtualizer.scrollToIndex(next, { align: 'auto' });
    } else rows.ensure(next, next);
  };

  return (
    <section className="panel event-list" aria-label="Event list" ref={listRef} style={{ ['--step-col' as string]: `${stepWidth.width}px` }}>
      <div className="event-list-head" role="row">
        <span className="num">seq</span>
        <span>type</span>
        <span className="event-list-step-head">
          step
          <ResizeHandle className="col-resizer" label="Resize the step column" width={stepWidth} />
        </span>
        <span>what</span>
        <span>time</span>
        <span className="num">+Δ</span>
      </div>
      {rows.error && <div className="error-text" role="alert">{rows.error}</div>}
      {rows.total === 0 && rows.scannedSeq > 0 && <div className="muted event-list-empty">No event passes the filter.</div>}
      <div className="event-list-scroll" ref={scrollRef} tabIndex={0} role="listbox" aria-label="Events" onKeyDown={onKey}>
        <div style={{ height: virtualizer.getTotalSize(), position: 'relative' }}>
          {items.map((item) => {
            const event = rows.get(item.index);
            const prev = item.index > 0 ? rows.get(item.index - 1) : undefined;
            const selected = event !== undefined && event.seq === selectedSeq;
            const line = event ? eventLine(event) : '';
            return (
              <div
                key={item.index}
                role="option"
                aria-selected={selected}
                data-seq={event?.seq}
                data-row={item.index}
                className={`event-row${selected ? ' selected' : ''}`}
                style={{ transform: `translateY(${item.start}px)`, height: ROW }}
                onClick={() => event && onSelect(event.seq)}
              >
                {event ? (
                  <>
                    <span className="seq num">{event.seq}</span>
                    <span className={`event-type type-${event.type.split('.')[0]}`} title={event.type}>{event.type}</span>
                    <span className="step-path" title={event.stepPath || '(the run itself)'}>{event.stepPath || '—'}</span>
                    <span className="event-line" title={line}>{line}</span>
                    <span className="time num">{formatClock(event.recordedAt)}</span>
                    <span className="delta num">{prev ? formatDuration(event.recordedAt - prev.recordedAt) : ''}</span>
                  </>
                ) : (
                  <span className="muted placeholder">loading…</span>
                )}
              </div>
            );
          })}
        </div>
      </div>
    </section>
  );
}
