/**
 * The runs table (TanStack Table): sortable columns, text + status filters, rows keyed by run id
 * and virtualised, so a studio with thousands of runs scrolls as smoothly as one with ten.
 * Columns live at module scope so the table is not rebuilt on every render.
 */
import { useMemo, useRef, useState } from 'react';
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
} from '@tanstack/react-table';
import { useVirtualizer } from '@tanstack/react-virtual';
import type { RunSummary } from '../lib/protocol.js';
import { useStudio } from '../store/studio-store.js';
import { formatDateTime, formatDuration } from '../lib/time-format.js';
import { StatusBadge, statusOf, type StatusFilter } from './StatusBadge.js';

const column = createColumnHelper<RunSummary>();

const missionOrId: FilterFn<RunSummary> = (row, _columnId, value: string) => {
  const needle = value.trim().toLowerCase();
  if (!needle) return true;
  return row.original.mission.toLowerCase().includes(needle) || row.original.runId.toLowerCase().includes(needle);
};

const COLUMNS = [
  column.accessor('mission', {
    header: 'Mission',
    cell: (info) => (
      <div className="runs-cell-mission">
        <span className="mission-name">{info.getValue()}</span>
        <span className="run-id">{info.row.original.runId}</span>
      </div>
    ),
    size: 140,
  }),
  // The shown status: a completed run with failures is filtered and sorted apart from a clean one.
  column.accessor((run) => statusOf(run), {
    id: 'status',
    header: 'Status',
    cell: (info) => <StatusBadge status={info.row.original.status} failures={info.row.original.failures} compact />,
    filterFn: 'equals',
    size: 100,
  }),
  column.accessor('startedAt', { header: 'Started', cell: (info) => formatDateTime(info.getValue()).slice(5), size: 100 }),
  column.accessor('durationMs', { header: 'Dur.', cell: (info) => formatDuration(info.getValue()), size: 70 }),
  column.accessor('steps', { header: 'Steps', size: 56 }),
  column.accessor('effects', { header: 'Eff.', size: 52 }),
  column.accessor('crashesSurvived', { header: 'Crash', cell: (info) => (info.getValue() > 0 ? <span className="crash-count">{info.getValue()}</span> : 0), size: 48 }),
  column.accessor('resumes', { header: 'Res.', size: 40 }),
];

const ROW_HEIGHT = 38;

export function RunsSidebarTable({ runs, text, status }: { runs: RunSummary[]; text: string; status: StatusFilter | 'all' }) {
  const selectedRunId = useStudio((s) => s.selectedRunId);
  const selectRun = useStudio((s) => s.selectRun);
  const [sorting, setSorting] = useState<SortingState>([{ id: 'startedAt', desc: true }]);
  const columnFilters = useMemo<ColumnFiltersState>(() => (status === 'all' ? [] : [{ id: 'status', value: status }]), [status]);

  const table = useReactTable({
    data: runs,
    columns: COLUMNS,
    getRowId: (run) => run.runId,
    state: { sorting, columnFilters, globalFilter: text },
    onSortingChange: setSorting,
    globalFilterFn: missionOrId,
    getCoreRowModel: getCoreRowModel(),
    getFilteredRowModel: getFilteredRowModel(),
    getSortedRowModel: getSortedRowModel(),
  });

  const rows = table.getRowModel().rows;
  const scrollRef = useRef<HTMLDivElement>(null);
  const virtualizer = useVirtualizer({
    count: rows.length,
    getScrollElement: () => scrollRef.current,
    estimateSize: () => ROW_HEIGHT,
    overscan: 12,
  });
  const items = virtualizer.getVirtualItems();
  const padTop = items[0]?.start ?? 0;
  const padBottom = virtualizer.getTotalSize() - (items[items.length - 1]?.end ?? 0);

  return (
    <div className="runs-table-scroll" ref={scrollRef}>
      <table className="runs-table" aria-label="Runs table" aria-rowcount={rows.length}>
        <thead>
          {table.getHeaderGroups().map((group) => (
            <tr key={group.id}>
              {group.headers.map((header) => {
                const sorted = header.column.getIsSorted();
                return (
                  <th
                    key={header.id}
                    style={{ width: header.getSize() }}
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
              <td style={{ height: padTop, padding: 0 }} colSpan={COLUMNS.length} />
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
                  <td key={cell.id}>{flexRender(cell.column.columnDef.cell, cell.getContext())}</td>
                ))}
              </tr>
            );
          })}
          {padBottom > 0 && (
            <tr aria-hidden="true">
              <td style={{ height: padBottom, padding: 0 }} colSpan={COLUMNS.length} />
            </tr>
          )}
        </tbody>
      </table>
    </div>
  );
}
