/**
 * The virtualised event list: seq, type, step path, time and the gap since the previous event.
 * Rows not loaded yet show a placeholder and ask for their page; ↑/↓ move the selection.
 */
import { useEffect, useRef } from 'react';
import { useVirtualizer } from '@tanstack/react-virtual';
import type { EventPages } from '../../lib/use-event-pages.js';
import { formatClock, formatDuration } from '../../lib/time-format.js';

const ROW = 22;

interface Props {
  lastSeq: number;
  pages: EventPages;
  selectedSeq: number | null;
  onSelect: (seq: number) => void;
}

export function EventInspectorList({ lastSeq, pages, selectedSeq, onSelect }: Props) {
  const scrollRef = useRef<HTMLDivElement>(null);
  const virtualizer = useVirtualizer({ count: lastSeq, getScrollElement: () => scrollRef.current, estimateSize: () => ROW, overscan: 20 });
  const items = virtualizer.getVirtualItems();
  const firstSeq = (items[0]?.index ?? 0) + 1;
  const lastVisibleSeq = (items[items.length - 1]?.index ?? 0) + 1;

  useEffect(() => {
    if (lastSeq > 0) pages.ensure(firstSeq, lastVisibleSeq);
  }, [firstSeq, lastVisibleSeq, lastSeq, pages.ensure]); // eslint-disable-line react-hooks/exhaustive-deps

  useEffect(() => {
    if (selectedSeq !== null && selectedSeq >= 1 && selectedSeq <= lastSeq) virtualizer.scrollToIndex(selectedSeq - 1, { align: 'auto' });
  }, [selectedSeq]); // eslint-disable-line react-hooks/exhaustive-deps

  const onKey = (e: React.KeyboardEvent) => {
    const d = e.key === 'ArrowDown' ? 1 : e.key === 'ArrowUp' ? -1 : e.key === 'PageDown' ? 20 : e.key === 'PageUp' ? -20 : 0;
    if (d === 0) return;
    e.preventDefault();
    onSelect(Math.min(lastSeq, Math.max(1, (selectedSeq ?? 0) + d)));
  };

  return (
    <section className="panel event-list" aria-label="Event list">
      <div className="event-list-head" role="row">
        <span>seq</span>
        <span>type</span>
        <span>step</span>
        <span>time</span>
        <span>+Δ</span>
      </div>
      {pages.error && <div className="error-text" role="alert">{pages.error}</div>}
      <div className="event-list-scroll" ref={scrollRef} tabIndex={0} role="listbox" aria-label="Events" onKeyDown={onKey}>
        <div style={{ height: virtualizer.getTotalSize(), position: 'relative' }}>
          {items.map((item) => {
            const seq = item.index + 1;
            const event = pages.get(seq);
            const prev = seq > 1 ? pages.get(seq - 1) : undefined;
            const selected = seq === selectedSeq;
            return (
              <div
                key={seq}
                role="option"
                aria-selected={selected}
                data-seq={seq}
                className={`event-row${selected ? ' selected' : ''}`}
                style={{ transform: `translateY(${item.start}px)`, height: ROW }}
                onClick={() => onSelect(seq)}
              >
                <span className="seq">{seq}</span>
                {event ? (
                  <>
                    <span className={`event-type type-${event.type.split('.')[0]}`}>{event.type}</span>
                    <span className="step-path">{event.stepPath || '—'}</span>
                    <span className="time">{formatClock(event.recordedAt)}</span>
                    <span className="delta">{prev ? formatDuration(event.recordedAt - prev.recordedAt) : ''}</span>
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
