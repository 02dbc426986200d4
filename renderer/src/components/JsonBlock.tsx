/**
 * A collapsible JSON tree, virtualised: the value is seen as the rows of its open nodes, built
 * lazily (lib/json-rows.ts), and only the rows in sight are in the DOM, so a `response` of 25k records
 * opens and scrubs as fast as one of ten. Clicking a container opens or closes it; what was opened
 * stays open while the value changes under it (scrubbing). Secrets are redacted by the engine
 * before they get here.
 */
import { useMemo, useRef, useState } from 'react';
import { useVirtualizer } from '@tanstack/react-virtual';
import { JsonRows, preview, type JsonRow } from '../lib/json-rows.js';

const ROW = 18;
const INDENT = 14;

function valueClass(value: unknown): string {
  if (value === null) return 'json-null';
  return `json-${typeof value}`;
}

function RowView({ row, onToggle }: { row: JsonRow; onToggle: (row: JsonRow) => void }) {
  const container = row.size !== null;
  const isArray = Array.isArray(row.value);
  return (
    <div
      role="treeitem"
      aria-level={row.depth + 1}
      aria-expanded={container ? row.open : undefined}
      className={`json-row${container ? ' json-container' : ''}`}
      style={{ paddingLeft: row.depth * INDENT, height: ROW }}
      onClick={container ? () => onToggle(row) : undefined}
      title={row.path}
    >
      {container && <span className="json-caret" aria-hidden="true">{row.open ? '▾' : '▸'}</span>}
      {row.label !== null && <span className="json-key">{row.label}:</span>}
      {container ? (
        row.open ? (
          <span className="json-meta">
            {isArray ? `[${row.size} item${row.size === 1 ? '' : 's'}]` : `{${row.size} key${row.size === 1 ? '' : 's'}}`}
          </span>
        ) : (
          <span className="json-preview">
            {preview(row.value)}
            <span className="json-meta"> {isArray ? `${row.size} items` : ''}</span>
          </span>
        )
      ) : (
        <span className={valueClass(row.value)}>{preview(row.value)}</span>
      )}
    </div>
  );
}

export function JsonBlock({ value, label, expandAll = false, maxHeight = 320 }: { value: unknown; label: string; expandAll?: boolean; maxHeight?: number }) {
  const [expanded, setExpanded] = useState<ReadonlyMap<string, boolean>>(() => new Map());
  const rows = useMemo(() => new JsonRows(value !== null && typeof value === 'object' ? value : {}, expanded, expandAll), [value, expanded, expandAll]);
  const scrollRef = useRef<HTMLDivElement>(null);
  const virtualizer = useVirtualizer({ count: rows.count, getScrollElement: () => scrollRef.current, estimateSize: () => ROW, overscan: 20 });

  if (value === undefined) return <div className="json-empty" aria-label={label}>—</div>;
  if (value === null || typeof value !== 'object') {
    return (
      <pre className="json-primitive" aria-label={label}>
        {JSON.stringify(value)}
      </pre>
    );
  }
  const toggle = (row: JsonRow) => setExpanded((prev) => new Map(prev).set(row.path, !row.open));
  return (
    <div
      className="json-block json-tree"
      aria-label={label}
      role="tree"
      ref={scrollRef}
      data-rows={rows.count}
      style={{ height: Math.min(rows.count * ROW + 10, maxHeight), maxHeight }}
    >
      <div style={{ height: virtualizer.getTotalSize(), position: 'relative' }}>
        {virtualizer.getVirtualItems().map((item) => {
          const row = rows.at(item.index);
          return (
            <div key={row.path} style={{ position: 'absolute', top: 0, left: 0, right: 0, transform: `translateY(${item.start}px)` }}>
              <RowView row={row} onToggle={toggle} />
            </div>
          );
        })}
      </div>
    </div>
  );
}
