/**
 * The side-by-side table of the replay diff: original | replayed, paired by seq, virtualised,
 * the divergent row highlighted and scrolled to, the rows after it dimmed.
 */
import { useEffect, useRef } from 'react';
import { useVirtualizer } from '@tanstack/react-virtual';
import type { VerifyRow } from '../../lib/verify-rows.js';
import { ReplayDiffTableSide } from './ReplayDiffTableSide.js';

const ROW = 24;

export function ReplayDiffTable({ rows, asked }: { rows: VerifyRow[]; asked: string | null }) {
  const scrollRef = useRef<HTMLDivElement>(null);
  const virtualizer = useVirtualizer({ count: rows.length, getScrollElement: () => scrollRef.current, estimateSize: () => ROW, overscan: 12 });
  const divergent = rows.findIndex((r) => r.state === 'divergent');
  useEffect(() => {
    if (divergent >= 0) virtualizer.scrollToIndex(divergent, { align: 'center' });
  }, [divergent]); // eslint-disable-line react-hooks/exhaustive-deps

  return (
    <section className="panel verify-table" aria-label="Replay comparison">
      <div className="verify-head">
        <span>#</span>
        <span>original (recorded)</span>
        <span>replayed</span>
      </div>
      <div className="verify-scroll" ref={scrollRef}>
        <div style={{ height: virtualizer.getTotalSize(), position: 'relative' }}>
          {virtualizer.getVirtualItems().map((item) => {
            const row = rows[item.index]!;
            return (
              <div
                key={row.index}
                className={`verify-row state-${row.state}`}
                data-state={row.state}
                style={{ transform: `translateY(${item.start}px)`, height: ROW }}
              >
                <span className="verify-index">{row.index}</span>
                <ReplayDiffTableSide entry={row.original} other={row.replayed} asked={null} />
                <ReplayDiffTableSide entry={row.replayed} other={row.original} asked={row.state === 'divergent' && !row.replayed ? asked : null} />
              </div>
            );
          })}
        </div>
      </div>
    </section>
  );
}
