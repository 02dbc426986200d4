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
import type { TimelineBar, TimelineLane, TimelineMarker, TimelineModel } from './timeline.js';
import { compareBars, MAX_WINDOW_PX, placeLaneBars, placeLaneMarkers, runExtent, runningMaxEnds } from './timeline-geometry.js';

export { MAX_WINDOW_PX } from './timeline-geometry.js';

export type TimelineAxis = 'seq' | 'time';

/** A lane with what a view needs to size it before any of its bars arrive. */
export interface TimelineLaneInfo extends TimelineLane {
  /** Deepest nesting of bars in the whole lane (0: no bar encloses another). */
  maxDepth: number;
  bars: number;
  markers: number;
}

export interface TimelineWindowBar extends TimelineBar {
  /** Nesting depth in its lane, over the whole run (a `for` bar encloses its body's bars). */
  depth: number;
  /**
   * How many bars this entry stands for. 1: this bar exactly. More: neighbours at the same depth
   * that share pixels at the requested `px`; the entry is the first of them, its end stretched to
   * the last one's and its status 'failed' if any of them failed.
   */
  merged: number;
}

export interface TimelineWindowMarker extends TimelineMarker {
  /** Markers of the same kind and lane within 6 px merged into this one (1: itself alone). */
  merged: number;
}

export interface TimelineWindow {
  runId: string;
  startAt: number;
  endAt: number;
  lastSeq: number;
  /** Every lane of the run, in order, whether or not it has bars in the window. */
  lanes: TimelineLaneInfo[];
  /** Totals over the whole run. */
  barCount: number;
  markerCount: number;
  /** Markers of the whole run that belong to no lane (crash, resume, …): they get a row of their own. */
  runMarkerCount: number;
  axis: TimelineAxis;
  /** The window answered, in axis units (the request's, or the run's extent when absent). */
  from: number;
  to: number;
  px: number | null;
  /** Bars with start <= to and end >= from, by lane (in `lanes` order) then start. */
  bars: TimelineWindowBar[];
  /** Markers with from <= position <= to, by lane (run-level ones, laneId null, last) then seq. */
  markers: TimelineWindowMarker[];
}


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
      lane.bars.sort(compareBars);
      lane.markers.sort((a, b) => a.seq - b.seq);
      const open: TimelineBar[] = [];
      for (const bar of lane.bars) {
        while (open.length > 0 && open[open.length - 1]!.endSeq < bar.startSeq) open.pop();
        lane.depths.push(open.length);
        lane.info.maxDepth = Math.max(lane.info.maxDepth, open.length);
        open.push(bar);
      }
      lane.maxEnd = runningMaxEnds(lane.bars, model.startAt);
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
    return runExtent(this.model)[axis];
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
    const placed = placeLaneBars(lane, axis, this.model.startAt, from, to, pxPerUnit, {
      open: (bar, depth): TimelineWindowBar => ({ ...bar, depth, merged: 1 }),
      merge: (entry, bar) => {
        entry.merged += 1;
        entry.endSeq = Math.max(entry.endSeq, bar.endSeq);
        entry.endAt = Math.max(entry.endAt, bar.endAt);
        if (bar.status === 'failed') entry.status = 'failed';
      },
    });
    for (const entry of placed) out.push(entry);
  }

  private laneMarkers(markers: TimelineMarker[], axis: TimelineAxis, from: number, to: number, pxPerUnit: number | null, out: TimelineWindowMarker[]): void {
    const placed = placeLaneMarkers(markers, axis, this.model.startAt, from, to, pxPerUnit, {
      open: (marker): TimelineWindowMarker => ({ ...marker, merged: 1 }),
      merge: (entry) => {
        entry.merged += 1;
      },
    });
    for (const entry of placed) out.push(entry);
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
