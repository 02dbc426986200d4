/**
 * The runs table (TanStack Table): sortable columns, text + status filters, rows keyed by run id
 * and virtualised, so a studio with thousands of runs scrolls as smoothly as one with ten.
 * Columns live at module scope so the table is not rebuilt on every render.
 */
import { useMemo, useState } from 'react';
import {
  createColumnHelper,
  flexRender,
  getCoreRowModel,
  getFilteredRowModel,
  getSortedRowModel,
  useReactTable,
  type ColumnFiltersState,
  type FilterFn,
  type SortingState,
  type VisibilityState,
} from '@tanstack/react-table';
import { useVirtualizer } from '@tanstack/react-virtual';
import type { RunSummary } from '../lib/protocol.js';
import { useStudio } from '../store/studio-store.js';
import { formatDateTime, formatDuration } from '../lib/time-format.js';
import { useElementWidth } from '../lib/use-element-width.js';
import { badgeText, StatusBadge, statusOf, type StatusFilter } from './StatusBadge.js';

const column = createColumnHelper<RunSummary>();
const MISSION_MIN = 120;
/** A cell's horizontal padding (styles.css: .runs-table td) plus slack for rounding and tabular digits. */
const CELL_PADDING = 20;
/** A status badge's padding and border (styles.css: .status-badge), with room for its bold face. */
const BADGE_PADDING = 24;

const missionOrId: FilterFn<RunSummary> = (row, _columnId, value: string) => {
  const needle = value.trim().toLowerCase();
  if (!needle) return true;
  return row.original.mission.toLowerCase().includes(needle) || row.original.runId.toLowerCase().includes(needle);
};

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
    cell: (info) => <StatusBadge status={info.row.original.status} failures={info.row.original.failures} compact />,
    filterFn: 'equals',
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

export function RunsSidebarTable({ runs, text, status }: { runs: RunSummary[]; text: string; status: StatusFilter | 'all' }) {
  const selectedRunId = useStudio((s) => s.selectedRunId);
  const selectRun = useStudio((s) => s.selectRun);
  const [sorting, setSorting] = useState<SortingState>([{ id: 'startedAt', desc: true }]);
  const columnFilters = useMemo<ColumnFiltersState>(() => (status === 'all' ? [] : [{ id: 'status', value: status }]), [status]);
  const [measure, available, scrollEl] = useElementWidth<HTMLDivElement>();
  const measureText = useMemo(() => (scrollEl.current ? textMeasure(scrollEl.current) : (text: string) => text.length * 8), [available > 0]); // eslint-disable-line react-hooks/exhaustive-deps
  const layout = useMemo(() => layoutColumns(runs, available || 600, measureText), [runs, available, measureText]);

  const table = useReactTable({
    data: runs,
    columns: COLUMNS,
    getRowId: (run) => run.runId,
    state: { sorting, columnFilters, globalFilter: text, columnVisibility: layout.hidden },
    onSortingChange: setSorting,
    globalFilterFn: missionOrId,
    getCoreRowModel: getCoreRowModel(),
    getFilteredRowModel: getFilteredRowModel(),
    getSortedRowModel: getSortedRowModel(),
  });

  const rows = table.getRowModel().rows;
  const virtualizer = useVirtualizer({
    count: rows.length,
    getScrollElement: () => scrollEl.current,
    estimateSize: () => ROW_HEIGHT,
    overscan: 12,
  });
  const items = virtualizer.getVirtualItems();
  const padTop = items[0]?.start ?? 0;
  const padBottom = virtualizer.getTotalSize() - (items[items.length - 1]?.end ?? 0);

  return (
    <div className="runs-table-scroll" ref={measure}>
      <table className="runs-table" aria-label="Runs table" aria-rowcount={rows.length}>
        <thead>
          {table.getHeaderGroups().map((group) => (
            <tr key={group.id}>
              {group.headers.map((header) => {
                const sorted = header.column.getIsSorted();
                return (
                  <th
                    key={header.id}
                    style={{ width: layout.widths[header.column.id] }}
                    aria-sort={sorted === 'asc' ? 'ascending' : sorted === 'desc' ? 'descending' : 'none'}
                  >
                    <button className="th-sort" aria-label={`Sort by ${String(header.column.columnDef.header)}`} onClick={header.column.getToggleSortingHandler()}>
                      {flexRender(header.column.columnDef.header, header.getContext())}
                      <span className="sort-arrow">{sorted === 'asc' ? '▲' : sorted === 'desc' ? '▼' : ''}</span>
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
              <td style={{ height: padTop, padding: 0 }} colSpan={table.getVisibleLeafColumns().length} />
            </tr>
          )}
          {items.map((item) => {
            const row = rows[item.index]!;
            const selected = row.id === selectedRunId;
            return (
              <tr
                key={row.id}
                data-run-id={row.id}
                aria-selected={selected}
                className={selected ? 'selected' : ''}
                style={{ height: ROW_HEIGHT }}
                onClick={() => selectRun(row.id)}
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
              <td style={{ height: padBottom, padding: 0 }} colSpan={table.getVisibleLeafColumns().length} />
            </tr>
          )}
        </tbody>
      </table>
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
