/**
 * The runs table (TanStack Table for its columns and cells, TanStack Virtual for its rows): the
 * engine filters, orders, pages and counts (lib/use-runs-pages.ts), so a log of 100k runs scrolls
 * as one of ten and any run can be reached — by filter, or by scrolling, whose rows load a page at
 * a time as they come into view. Sorted by Started (either way) on the engine; by another column
 * only once every run the filters take is loaded (the table then sorts them itself). Columns live
 * at module scope so the table is not rebuilt on every render.
 */
import { useEffect, useMemo, useState } from 'react';
import { createColumnHelper, flexRender, getCoreRowModel, useReactTable, type SortingState, type VisibilityState } from '@tanstack/react-table';
import { useVirtualizer } from '@tanstack/react-virtual';
import type { RunSummary } from '../lib/protocol.js';
import { useStudio } from '../store/studio-store.js';
import { formatDateTime, formatDuration } from '../lib/time-format.js';
import { useElementWidth } from '../lib/use-element-width.js';
import { useRunsPages, type RunsQuery } from '../lib/use-runs-pages.js';
import { useSettled } from '../lib/use-settled.js';
import { fresherSummary } from '../lib/summary-order.js';
import { StatusBadge } from './StatusBadge.js';
import { badgeText, statusOf, type StatusFilter } from '../lib/run-status.js';

const column = createColumnHelper<RunSummary>();
const MISSION_MIN = 120;
/** A cell's horizontal padding (styles.css: .runs-table td) plus slack for rounding and tabular digits. */
const CELL_PADDING = 20;
/** A status badge's padding and border (styles.css: .status-badge), with room for its bold face. */
const BADGE_PADDING = 24;

/** A column that shows a number, a duration or a date (or a count in a badge): never cut off, so sized to its widest value. */
interface NumericMeta {
  text: (run: RunSummary) => string;
  /** Dropped first when the sidebar is narrow: higher goes first; absent: never dropped. */
  dropOrder?: number;
  /** Room around the text besides the cell's padding (a badge's own padding and border). */
  extraPx?: number;
}
declare module '@tanstack/react-table' {
  // eslint-disable-next-line @typescript-eslint/no-unused-vars
  interface ColumnMeta<TData, TValue> {
    numeric?: NumericMeta;
  }
}

const started = (run: RunSummary) => formatDateTime(run.startedAt).slice(5);
const numeric = (text: (run: RunSummary) => string, dropOrder: number) => ({ meta: { numeric: { text, dropOrder } } });

const COLUMNS = [
  column.accessor('mission', {
    header: 'Mission',
    cell: (info) => (
      <div className="runs-cell-mission" title={`${info.getValue()} · ${info.row.original.runId}`}>
        <span className="mission-name">{info.getValue()}</span>
        <span className="run-id">{info.row.original.runId}</span>
      </div>
    ),
    size: MISSION_MIN,
  }),
  // The shown status: a completed run with failures is filtered and sorted apart from a clean one.
  column.accessor((run) => statusOf(run), {
    id: 'status',
    header: 'Status',
    cell: (info) => <StatusBadge status={info.row.original.status} failures={info.row.original.failures} stopped={info.row.original.stopped === true} compact />,
    size: 100,
    meta: { numeric: { text: (r) => badgeText(r.status, r.failures, true), extraPx: BADGE_PADDING } },
  }),
  column.accessor('startedAt', { header: 'Started', cell: (info) => started(info.row.original), size: 60, ...numeric(started, 2) }),
  column.accessor('durationMs', { header: 'Dur.', cell: (info) => formatDuration(info.getValue()), size: 50, ...numeric((r) => formatDuration(r.durationMs), 3) }),
  column.accessor('steps', { header: 'Steps', size: 50, ...numeric((r) => String(r.steps), 4) }),
  column.accessor('effects', { header: 'Eff.', size: 40, ...numeric((r) => String(r.effects), 5) }),
  column.accessor('crashesSurvived', { header: 'Crash', cell: (info) => (info.getValue() > 0 ? <span className="crash-count">{info.getValue()}</span> : 0), size: 50, ...numeric((r) => String(r.crashesSurvived), 6) }),
  column.accessor('resumes', { header: 'Res.', size: 40, ...numeric((r) => String(r.resumes), 7) }),
];

/**
 * Each column's width for these runs in a table `available` px wide: a numeric column fits its
 * widest value as the browser measures it in the cells' font; when they do not all fit
 * beside the mission's minimum, the columns with the highest dropOrder are hidden, whole.
 */
function layoutColumns(runs: readonly RunSummary[], available: number, measure: (text: string) => number): { widths: Record<string, number>; hidden: VisibilityState } {
  const widths: Record<string, number> = {};
  for (const c of COLUMNS) {
    const id = c.id ?? (c as { accessorKey?: string }).accessorKey!;
    const meta = c.meta?.numeric;
    const widest = meta ? runs.reduce((n, r) => Math.max(n, measure(meta.text(r))), 0) : 0;
    widths[id] = Math.max(c.size ?? 0, Math.ceil(widest) + CELL_PADDING + (meta?.extraPx ?? 0));
  }
  const hidden: VisibilityState = {};
  const droppable = COLUMNS.filter((c) => c.meta?.numeric?.dropOrder !== undefined).sort((a, b) => b.meta!.numeric!.dropOrder! - a.meta!.numeric!.dropOrder!);
  let total = Object.values(widths).reduce((a, b) => a + b, 0);
  for (const c of droppable) {
    if (total <= available) break;
    const id = c.id ?? (c as { accessorKey?: string }).accessorKey!;
    hidden[id] = false;
    total -= widths[id]!;
  }
  widths.mission = Math.max(MISSION_MIN, available - total + widths.mission!);
  return { widths, hidden };
}

const ROW_HEIGHT = 38;
/** How long typing rests before the engine is asked: one request per word, not per key. */
const TEXT_SETTLE_MS = 200;
const NEWEST_FIRST = { id: 'startedAt', desc: true };

/** A column's value to sort by, as its accessor reads it. */
function sortValue(run: RunSummary, id: string): string | number {
  if (id === 'status') return statusOf(run);
  const value = run[id as keyof RunSummary];
  return typeof value === 'number' || typeof value === 'string' ? value : 0;
}

export function RunsSidebarTable({ text, status }: { text: string; status: StatusFilter | 'all' }) {
  const selectedRunId = useStudio((s) => s.selectedRunId);
  const selectRun = useStudio((s) => s.selectRun);
  const runsById = useStudio((s) => s.runsById);
  const version = useStudio((s) => s.runsListVersion);
  const [sorting, setSorting] = useState<SortingState>([NEWEST_FIRST]);
  const needle = useSettled(text.trim(), TEXT_SETTLE_MS);
  const sortedBy = sorting[0] ?? NEWEST_FIRST;
  const byStart = sortedBy.id === 'startedAt';
  const query = useMemo<RunsQuery>(
    () => ({ ...(status === 'all' ? {} : { status }), ...(needle ? { text: needle } : {}), ...(byStart && !sortedBy.desc ? { oldestFirst: true } : {}) }),
    [status, needle, byStart, sortedBy.desc],
  );
  const pages = useRunsPages(query, version);
  // Sorted by another column: every run the filters take, sorted here (offered only when all are loaded).
  const sorted = useMemo(() => {
    if (byStart || !pages.loadedAll) return null;
    const all = Object.keys(pages.pages).map(Number).sort((a, b) => a - b).flatMap((p) => pages.pages[p]!);
    const dir = sortedBy.desc ? -1 : 1;
    return all.sort((a, b) => {
      const x = sortValue(a, sortedBy.id);
      const y = sortValue(b, sortedBy.id);
      return x < y ? -dir : x > y ? dir : 0;
    });
  }, [byStart, pages.loadedAll, pages.pages, sortedBy.id, sortedBy.desc]);
  // A filter that takes more runs than are loaded: back to the engine's order.
  useEffect(() => {
    if (!byStart && pages.total !== null && !pages.loadedAll) setSorting([NEWEST_FIRST]);
  }, [byStart, pages.total, pages.loadedAll]);

  const count = sorted ? sorted.length : (pages.total ?? 0);

  const [measure, available, scrollEl] = useElementWidth<HTMLDivElement>();
  const virtualizer = useVirtualizer({
    count,
    getScrollElement: () => scrollEl.current,
    estimateSize: () => ROW_HEIGHT,
    overscan: 12,
  });
  const items = virtualizer.getVirtualItems();
  const firstIndex = items[0]?.index ?? 0;
  const lastIndex = items[items.length - 1]?.index ?? 0;
  const { ensure } = pages;
  useEffect(() => {
    if (!sorted) ensure(firstIndex, lastIndex);
  }, [sorted, ensure, firstIndex, lastIndex]);

  // A push newer than the page it was listed in wins: rows update live between page reads.
  const fresh = (run: RunSummary) => fresherSummary(runsById[run.runId], run);
  const slots = items.map((item) => {
    const run = sorted ? sorted[item.index] : pages.runAt(item.index);
    return { item, run: run && fresh(run) };
  });
  // The table's data keeps its identity while the rows on screen stay the same: a new array each
  // render would have TanStack Table rebuild its row model (and reset its state) on every render.
  const windowKey = slots.map((s) => (s.run ? `${s.run.runId}@${s.run.updatedAt}` : '')).join();
  const windowRuns = useMemo(() => slots.flatMap((s) => (s.run ? [s.run] : [])), [windowKey]); // eslint-disable-line react-hooks/exhaustive-deps
  // Columns fit the first page and the rows on screen (measuring every loaded run would grow with the log).
  const measured = useMemo(() => [...(pages.pages[0] ?? []), ...windowRuns], [pages.pages[0], windowRuns]); // eslint-disable-line react-hooks/exhaustive-deps
  const measureText = useMemo(() => (scrollEl.current ? textMeasure(scrollEl.current) : (text: string) => text.length * 8), [available > 0]); // eslint-disable-line react-hooks/exhaustive-deps
  const layout = useMemo(() => layoutColumns(measured, available || 600, measureText), [measured, available, measureText]);

  const table = useReactTable({
    data: windowRuns,
    columns: COLUMNS,
    getRowId: (run) => run.runId,
    state: { sorting, columnVisibility: layout.hidden },
    onSortingChange: setSorting,
    manualSorting: true,
    manualFiltering: true,
    manualPagination: true,
    autoResetAll: false,
    getCoreRowModel: getCoreRowModel(),
  });
  const rowsById = table.getRowModel().rowsById;
  const padTop = items[0]?.start ?? 0;
  const padBottom = virtualizer.getTotalSize() - (items[items.length - 1]?.end ?? 0);
  const columns = table.getVisibleLeafColumns().length;

  return (
    <div className="runs-table-scroll" ref={measure}>
      <table className="runs-table" aria-label="Runs table" aria-rowcount={count}>
        <thead>
          {table.getHeaderGroups().map((group) => (
            <tr key={group.id}>
              {group.headers.map((header) => {
                const sortedHere = header.column.getIsSorted();
                const id = header.column.id;
                const canSort = id === 'startedAt' || pages.loadedAll;
                const name = String(header.column.columnDef.header);
                return (
                  <th
                    key={header.id}
                    style={{ width: layout.widths[id] }}
                    aria-sort={sortedHere === 'asc' ? 'ascending' : sortedHere === 'desc' ? 'descending' : 'none'}
                  >
                    <button
                      className="th-sort"
                      aria-label={`Sort by ${name}`}
                      disabled={!canSort}
                      title={canSort ? undefined : `Sorting by ${name} needs every run listed: filter to at most the runs loaded so far (${count} of ${pages.total ?? 0})`}
                      onClick={header.column.getToggleSortingHandler()}
                    >
                      {flexRender(header.column.columnDef.header, header.getContext())}
                      <span className="sort-arrow">{sortedHere === 'asc' ? '▲' : sortedHere === 'desc' ? '▼' : ''}</span>
                    </button>
                  </th>
                );
              })}
            </tr>
          ))}
        </thead>
        <tbody>
          {padTop > 0 && (
            <tr aria-hidden="true">
              <td style={{ height: padTop, padding: 0 }} colSpan={columns} />
            </tr>
          )}
          {slots.map(({ item, run }) => {
            const row = run && rowsById[run.runId];
            if (!row) {
              return (
                <tr key={item.key} className="runs-row-loading" aria-busy="true" style={{ height: ROW_HEIGHT }}>
                  <td colSpan={columns}>…</td>
                </tr>
              );
            }
            const selected = row.id === selectedRunId;
            return (
              <tr
                // Keyed by its run, not its place: a run arriving above keeps the focus on the run
                // it was on (helper 90: Enter opened the run that had moved into the focused place).
                key={row.id}
                data-run-id={row.id}
                aria-rowindex={item.index + 1}
                aria-selected={selected}
                className={selected ? 'selected' : ''}
                style={{ height: ROW_HEIGHT }}
                onClick={() => selectRun(row.id)}
                // Operable without a mouse (helper 83): Enter or Space opens the run, ↑/↓ move between rows.
                tabIndex={0}
                onKeyDown={(e) => {
                  if (e.key === 'Enter' || e.key === ' ') {
                    e.preventDefault();
                    selectRun(row.id);
                  } else if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
                    e.preventDefault();
                    const next = e.key === 'ArrowDown' ? e.currentTarget.nextElementSibling : e.currentTarget.previousElementSibling;
                    if (next instanceof HTMLElement && next.dataset.runId !== undefined) next.focus();
                  }
                }}
              >
                {row.getVisibleCells().map((cell) => (
                  <td key={cell.id} className={cell.column.columnDef.meta?.numeric ? 'num' : undefined}>
                    {flexRender(cell.column.columnDef.cell, cell.getContext())}
                  </td>
                ))}
              </tr>
            );
          })}
          {padBottom > 0 && (
            <tr aria-hidden="true">
              <td style={{ height: padBottom, padding: 0 }} colSpan={columns} />
            </tr>
          )}
        </tbody>
      </table>
      {pages.total === 0 && <div className="runs-table-empty">No run matches these filters.</div>}
      {pages.error && (
        <div className="runs-table-error" role="alert">
          Could not list runs: {pages.error}
        </div>
      )}
    </div>
  );
}

/** A text-width measure in the font of `el`'s numeric cells (a canvas: no layout per value). */
function textMeasure(el: HTMLElement): (text: string) => number {
  const probe = document.createElement('span');
  probe.className = 'num';
  el.appendChild(probe);
  // From the longhands: the `font` shorthand reads '' when a variant (tabular-nums) is set.
  const style = getComputedStyle(probe);
  const font = `${style.fontStyle} ${style.fontWeight} ${style.fontSize} ${style.fontFamily}`;
  probe.remove();
  const ctx = document.createElement('canvas').getContext('2d');
  if (!ctx) return (text) => text.length * 8;
  ctx.font = font;
  return (text) => ctx.measureText(text).width;
}
