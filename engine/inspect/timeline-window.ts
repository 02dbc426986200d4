/**
 * A timeline model indexed for windows: the answer to "which bars and markers of this run lie
 * between `from` and `to`", without walking the whole run, at a resolution the caller names.
 *
 * Bars are grouped per lane and sorted by start (an enclosing bar before the ones it encloses),
 * each with its nesting depth over the whole lane and a running maximum of ends per axis: ends
 * alone are not sorted (bars nest), their running maximum is, so the first bar that can reach the
 * window is found by binary search. Markers are grouped per lane and sorted by seq (in the time
 * axis seq order is time order: recordedAt never decreases along a run).
 *
 * Invariant: without `px`, `window()` returns exactly the bars with start <= to && end >= from
 * and the markers with from <= position <= to; with `px`, the same set, with neighbours that
 * would share pixels folded into one entry whose `merged` counts them (the counts add up to the
 * exact set's size). The index never mutates the model it was built from.
 */
import type {
  TimelineAxis,
  TimelineBar,
  TimelineLaneInfo,
  TimelineMarker,
  TimelineModel,
  TimelineWindow,
  TimelineWindowBar,
  TimelineWindowMarker,
} from '../protocol/protocol.js';

/** Bars narrower than this many pixels merge into a neighbour that touches them. */
const MERGE_BELOW_PX = 4;
/** Markers of one kind closer than this many pixels merge. */
const MARKER_MERGE_PX = 6;
export const MAX_WINDOW_PX = 100_000;

export interface WindowQuery {
  axis: TimelineAxis;
  /** Absent: the run's extent on that axis. */
  from?: number;
  to?: number;
  px?: number;
}

interface LaneEntry {
  info: TimelineLaneInfo;
  bars: TimelineBar[];
  depths: number[];
  /** maxEnd.seq[i] = max(endSeq of bars[0..i]); maxEnd.time likewise in ms since the run's start. */
  maxEnd: { seq: number[]; time: number[] };
  markers: TimelineMarker[];
}

export class TimelineWindowIndex {
  private readonly lanes: LaneEntry[] = [];
  /** Markers with no lane (run-level: crash, resume, …) or a lane the model does not list. */
  private readonly runMarkers: TimelineMarker[] = [];

  constructor(private readonly model: TimelineModel) {
    const byId = new Map<string, LaneEntry>();
    const laneOf = (id: string): LaneEntry => {
      let lane = byId.get(id);
      if (lane === undefined) {
        // A bar on a lane the model does not list still gets drawn, on a lane of its own.
        lane = { info: { id, label: id, stage: 0, maxDepth: 0, bars: 0, markers: 0 }, bars: [], depths: [], maxEnd: { seq: [], time: [] }, markers: [] };
        byId.set(id, lane);
        this.lanes.push(lane);
      }
      return lane;
    };
    for (const lane of model.lanes) laneOf(lane.id).info = { ...lane, maxDepth: 0, bars: 0, markers: 0 };
    for (const bar of model.bars) laneOf(bar.laneId).bars.push(bar);
    for (const marker of model.markers) {
      const lane = marker.laneId === null ? undefined : byId.get(marker.laneId);
      if (lane !== undefined) lane.markers.push(marker);
      else this.runMarkers.push(marker);
    }
    for (const lane of this.lanes) {
      lane.bars.sort((a, b) => a.startSeq - b.startSeq || b.endSeq - a.endSeq);
      lane.markers.sort((a, b) => a.seq - b.seq);
      const open: TimelineBar[] = [];
      let maxSeq = -Infinity;
      let maxTime = -Infinity;
      for (const bar of lane.bars) {
        while (open.length > 0 && open[open.length - 1]!.endSeq < bar.startSeq) open.pop();
        lane.depths.push(open.length);
        lane.info.maxDepth = Math.max(lane.info.maxDepth, open.length);
        open.push(bar);
        maxSeq = Math.max(maxSeq, bar.endSeq);
        maxTime = Math.max(maxTime, bar.endAt - model.startAt);
        lane.maxEnd.seq.push(maxSeq);
        lane.maxEnd.time.push(maxTime);
      }
      lane.info.bars = lane.bars.length;
      lane.info.markers = lane.markers.length;
    }
    this.runMarkers.sort((a, b) => a.seq - b.seq);
  }

  get lastSeq(): number {
    return this.model.lastSeq;
  }

  /** The whole run on one axis: seq [0, lastSeq + 1], time [0, ms from first to last event] (never empty). */
  extent(axis: TimelineAxis): [number, number] {
    return axis === 'seq'
      ? [0, Math.max(1, this.model.lastSeq) + 1]
      : [0, Math.max(this.model.endAt, this.model.startAt + 1) - this.model.startAt];
  }

  window(query: WindowQuery): TimelineWindow {
    const { axis } = query;
    const [from, to] = checkWindow(query, this.extent(axis));
    const px = query.px ?? null;
    // A point window has no width to share: nothing merges.
    const pxPerUnit = px !== null && to > from ? px / (to - from) : null;
    const bars: TimelineWindowBar[] = [];
    const markers: TimelineWindowMarker[] = [];
    for (const lane of this.lanes) {
      this.laneBars(lane, axis, from, to, pxPerUnit, bars);
      this.laneMarkers(lane.markers, axis, from, to, pxPerUnit, markers);
    }
    this.laneMarkers(this.runMarkers, axis, from, to, pxPerUnit, markers);
    return {
      runId: this.model.runId,
      startAt: this.model.startAt,
      endAt: this.model.endAt,
      lastSeq: this.model.lastSeq,
      lanes: this.lanes.map((lane) => ({ ...lane.info })),
      barCount: this.model.bars.length,
      markerCount: this.model.markers.length,
      runMarkerCount: this.runMarkers.length,
      axis,
      from,
      to,
      px,
      bars,
      markers,
    };
  }

  private laneBars(lane: LaneEntry, axis: TimelineAxis, from: number, to: number, pxPerUnit: number | null, out: TimelineWindowBar[]): void {
    const t0 = this.model.startAt;
    /** Per depth, the last entry emitted and its extent in pixels, for merging. */
    const lastAtDepth: { entry: TimelineWindowBar; left: number; right: number }[] = [];
    for (let i = lowerBoundBy(lane.maxEnd[axis], from, (v) => v); i < lane.bars.length; i++) {
      const bar = lane.bars[i]!;
      const start = axis === 'seq' ? bar.startSeq : bar.startAt - t0;
      if (start > to) break;
      const end = axis === 'seq' ? bar.endSeq : bar.endAt - t0;
      if (end < from) continue;
      const depth = lane.depths[i]!;
      if (pxPerUnit === null) {
        out.push({ ...bar, depth, merged: 1 });
        continue;
      }
      // The same geometry the renderer draws: a seq bar covers whole events, [startSeq, endSeq + 1).
      const left = (start - from) * pxPerUnit;
      const width = Math.max(2, ((axis === 'seq' ? end + 1 : end) - start) * pxPerUnit);
      const prev = lastAtDepth[depth];
      if (prev !== undefined && left < prev.right + 1 && width < MERGE_BELOW_PX) {
        const entry = prev.entry;
        entry.merged += 1;
        entry.endSeq = Math.max(entry.endSeq, bar.endSeq);
        entry.endAt = Math.max(entry.endAt, bar.endAt);
        if (bar.status === 'failed') entry.status = 'failed';
        prev.right = Math.max(prev.right, left + width);
        continue;
      }
      const entry: TimelineWindowBar = { ...bar, depth, merged: 1 };
      lastAtDepth[depth] = { entry, left, right: left + width };
      out.push(entry);
    }
  }

  private laneMarkers(markers: TimelineMarker[], axis: TimelineAxis, from: number, to: number, pxPerUnit: number | null, out: TimelineWindowMarker[]): void {
    const t0 = this.model.startAt;
    const pos = (m: TimelineMarker) => (axis === 'seq' ? m.seq : m.at - t0);
    const lastByKind = new Map<string, { entry: TimelineWindowMarker; left: number }>();
    for (let i = lowerBoundBy(markers, from, pos); i < markers.length; i++) {
      const marker = markers[i]!;
      const p = pos(marker);
      if (p > to) break;
      if (pxPerUnit === null) {
        out.push({ ...marker, merged: 1 });
        continue;
      }
      const left = (p - from) * pxPerUnit;
      const prev = lastByKind.get(marker.kind);
      if (prev !== undefined && left - prev.left < MARKER_MERGE_PX) {
        prev.entry.merged += 1;
        continue;
      }
      const entry: TimelineWindowMarker = { ...marker, merged: 1 };
      lastByKind.set(marker.kind, { entry, left });
      out.push(entry);
    }
  }
}

/** The window a query names, checked: finite bounds, from <= to, px an integer in 1..MAX_WINDOW_PX. */
export function checkWindow(query: WindowQuery, extent: [number, number]): [number, number] {
  if (query.axis !== 'seq' && query.axis !== 'time') {
    throw new RangeError(`timeline window: axis must be 'seq' or 'time', got ${JSON.stringify(query.axis)}`);
  }
  const from = query.from ?? extent[0];
  const to = query.to ?? extent[1];
  for (const [name, value] of [['from', from], ['to', to]] as const) {
    if (typeof value !== 'number' || !Number.isFinite(value)) throw new RangeError(`timeline window: "${name}" must be a finite number, got ${String(value)}`);
  }
  if (from > to) throw new RangeError(`timeline window: "from" (${from}) is after "to" (${to}); ask for from <= to`);
  const px = query.px;
  if (px !== undefined && (!Number.isInteger(px) || px < 1 || px > MAX_WINDOW_PX)) {
    throw new RangeError(`timeline window: "px" must be an integer from 1 to ${MAX_WINDOW_PX}, got ${String(px)}`);
  }
  return [from, to];
}

/** First index whose key is >= target, in an array sorted by key. */
function lowerBoundBy<T>(items: T[], target: number, key: (item: T) => number): number {
  let lo = 0;
  let hi = items.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (key(items[mid]!) < target) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
