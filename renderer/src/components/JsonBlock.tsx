/**
 * A collapsible JSON tree, virtualised: the value is seen as the rows of its open nodes, built
 * lazily (lib/json-rows.ts), and only the rows in sight are in the DOM, so a `response` of 25k records
 * opens and scrubs as fast as one of ten. Clicking a container opens or closes it; what was opened
 * stays open while the value changes under it (scrubbing). An array the engine sent a window of
 * (`slices`, inspect/state-slice.ts) says which items it shows and pages through the rest
 * (`onWindow` asks the engine for another window). Secrets are redacted by the engine before
 * they get here.
 */
import { useMemo, useRef, useState } from 'react';
import { useVirtualizer } from '@tanstack/react-virtual';
import { cutText, JsonRows, preview, ROW_TEXT, type ArrayWindow, type JsonRow } from '../lib/json-rows.js';
import type { ValueSlice } from '../lib/protocol.js';
import { jsonText, visibleControls } from '../lib/visible-text.js';

const ROW = 18;
const INDENT = 14;

function valueClass(value: unknown): string {
  if (value === null) return 'json-null';
  return `json-${typeof value}`;
}

/**
 * "items 500–999 of 25,000" (or "characters 0–4,095 of 20,971,520" for a long string) with
 * previous/next and a go-to box, in the row of a value the engine sent a window of.
 */
function WindowPager({ path, window, onWindow }: { path: string; window: ArrayWindow; onWindow: (path: string, from: number) => void }) {
  const last = window.from + window.count - 1;
  const unit = window.unit === 'chars' ? 'characters' : 'items';
  const go = (from: number) => onWindow(path, Math.max(0, Math.min(from, window.total - window.count)));
  return (
    <span className="json-window" onClick={(e) => e.stopPropagation()}>
      <span className="json-meta">
        {unit} {window.from.toLocaleString('en-US')}–{last.toLocaleString('en-US')} of {window.total.toLocaleString('en-US')}
      </span>
      <button aria-label={`Previous ${unit} of ${path}`} disabled={window.from === 0} onClick={() => go(window.from - window.count)}>◀</button>
      <button aria-label={`Next ${unit} of ${path}`} disabled={last >= window.total - 1} onClick={() => go(window.from + window.count)}>▶</button>
      <input
        aria-label={`Go to ${window.unit === 'chars' ? 'character' : 'item'} of ${path}`}
        type="number"
        min={0}
        max={window.total - 1}
        placeholder={window.unit === 'chars' ? 'char #' : 'item #'}
        onKeyDown={(e) => {
          if (e.key !== 'Enter') return;
          const n = Number((e.target as HTMLInputElement).value);
          if (Number.isInteger(n) && n >= 0) go(n - (n % window.count));
        }}
      />
    </span>
  );
}

function RowView({ row, onToggle, onWindow }: { row: JsonRow; onToggle: (row: JsonRow) => void; onWindow?: (path: string, from: number) => void }) {
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
      {row.label !== null && <span className="json-key">{visibleControls(row.label)}:</span>}
      {!container ? (
        <>
          <span className={valueClass(row.value)}>{preview(row.value)}</span>
          {typeof row.value === 'string' && <TextRest text={row.value} window={row.window} />}
        </>
      ) : row.open ? (
        <span className="json-meta">{isArray ? `[${row.size} item${row.size === 1 ? '' : 's'}]` : `{${row.size} key${row.size === 1 ? '' : 's'}}`}</span>
      ) : (
        <span className="json-preview">
          {preview(row.value)}
          <span className="json-meta"> {isArray ? `${row.size} items` : ''}</span>
        </span>
      )}
      {row.window && onWindow && <WindowPager path={row.path} window={row.window} onWindow={onWindow} />}
    </div>
  );
}

/**
 * What a long string's row does not draw: "… N more characters" (of the whole string when the
 * engine sent a window of it), and a copy of the characters the page holds.
 */
function TextRest({ text, window }: { text: string; window: ArrayWindow | undefined }) {
  const { more } = cutText(text);
  const hidden = (window ? window.total - window.count : 0) + more;
  if (hidden === 0) return null;
  return (
    <span className="json-meta" onClick={(e) => e.stopPropagation()}>
      {' '}… {hidden.toLocaleString('en-US')} more characters
      <button
        className="json-copy"
        aria-label="Copy text"
        title={window ? `copies characters ${window.from}–${window.from + window.count - 1}; page with ◀ ▶ for others` : 'copies the whole string'}
        onClick={() => void navigator.clipboard?.writeText(text)}
      >
        copy
      </button>
    </span>
  );
}

interface JsonBlockProps {
  value: unknown;
  label: string;
  expandAll?: boolean;
  maxHeight?: number;
  /** The windows the engine cut this value's big arrays to (already those of this value). */
  slices?: readonly ValueSlice[];
  onWindow?: (path: string, from: number) => void;
}

export function JsonBlock({ value, label, expandAll = false, maxHeight = 320, slices, onWindow }: JsonBlockProps) {
  const [expanded, setExpanded] = useState<ReadonlyMap<string, boolean>>(() => new Map());
  const windows = useMemo(() => new Map((slices ?? []).map((s) => [s.path, { from: s.from, count: s.count, total: s.total, ...(s.unit ? { unit: s.unit } : {}) }])), [slices]);
  const rows = useMemo(
    () => new JsonRows(value !== null && typeof value === 'object' ? value : {}, expanded, expandAll, windows),
    [value, expanded, expandAll, windows],
  );
  const scrollRef = useRef<HTMLDivElement>(null);
  const virtualizer = useVirtualizer({ count: rows.count, getScrollElement: () => scrollRef.current, estimateSize: () => ROW, overscan: 20 });

  if (value === undefined) return <div className="json-empty" aria-label={label}>—</div>;
  if (value === null || typeof value !== 'object') {
    return (
      <pre className="json-primitive" aria-label={label}>
        {typeof value === 'string' ? preview(value, ROW_TEXT) : jsonText(value)}
        {typeof value === 'string' && <TextRest text={value} window={windows.get('$')} />}
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
              <RowView row={row} onToggle={toggle} {...(onWindow ? { onWindow } : {})} />
            </div>
          );
        })}
      </div>
    </div>
  );
}
