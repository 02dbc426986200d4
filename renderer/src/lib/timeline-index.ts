/**
 * Geometry of the timeline, independent of React: the bars and markers of one loaded window
 * (`run.timelineWindow`) grouped per lane and sorted, so a lane can find the ones inside the
 * visible window by binary search instead of scanning them on every frame; and the rule that
 * decides when the loaded window no longer serves the visible one (panned past it, or zoomed in
 * past its resolution) and which window to load next. The x axis is either wall time (ms since
 * the run started) or seq — the latter keeps a run with a 30-day pause readable. Where things sit,
 * how wide a bar is and when neighbours merge is the engine's geometry (timeline-geometry.ts),
 * the same rule its window index merged the loaded window by.
 */
import {
  barEnd,
  barStart,
  compareBars,
  MAX_WINDOW_PX,
  markerPos,
  placeLaneBars,
  placeLaneMarkers,
  runExtent,
  runningMaxEnds,
  type TimelineAxis,
  type TimelineWindow,
  type TimelineWindowBar,
  type TimelineWindowMarker,
} from './protocol.js';

export type { TimelineAxis } from './protocol.js';
// The geometry is the engine's own (engine/inspect/timeline-geometry.ts): one rule for both sides.
export { barEnd, barStart, markerPos, runExtent } from './protocol.js';

export interface LaneIndex {
  id: string;
  label: string;
  stage: number;
  bars: TimelineWindowBar[];
  /** Nesting depth of each bar (a `for` step's bar encloses its body's bars), from the engine. */
  depths: number[];
  /** Running maximum of bar ends, per axis: monotonic, so it can be binary-searched. */
  maxEnd: { time: number[]; seq: number[] };
  markers: TimelineWindowMarker[];
  /** Deepest nesting in the whole lane (0 when no bar encloses another): sets the lane's height. */
  maxDepth: number;
}

export interface TimelineIndex {
  lanes: LaneIndex[];
  /** Markers with no lane (run-level: crash, resume, …), shown on their own row. */
  runMarkers: TimelineWindowMarker[];
  /** Whether the run has run-level markers at all (inside the loaded window or not). */
  hasRunRow: boolean;
  extent: { time: [number, number]; seq: [number, number] };
}

export const RUN_LANE_ID = '__run__';

export function buildTimelineIndex(win: TimelineWindow): TimelineIndex {
  const byId = new Map<string, LaneIndex>();
  const lanes: LaneIndex[] = [];
  for (const lane of win.lanes) {
    const entry: LaneIndex = emptyLane(lane.id, lane.label, lane.stage, lane.maxDepth);
    byId.set(lane.id, entry);
    lanes.push(entry);
  }
  const runMarkers: TimelineWindowMarker[] = [];
  for (const bar of win.bars) {
    let lane = byId.get(bar.laneId);
    if (!lane) {
      lane = emptyLane(bar.laneId, bar.laneId, 0, 0);
      byId.set(bar.laneId, lane);
      lanes.push(lane);
    }
    lane.bars.push(bar);
  }
  for (const marker of win.markers) {
    const lane = marker.laneId === null ? undefined : byId.get(marker.laneId);
    if (lane) lane.markers.push(marker);
    else runMarkers.push(marker);
  }
  for (const lane of lanes) {
    lane.bars.sort(compareBars);
    lane.markers.sort((a, b) => a.seq - b.seq);
    for (const bar of lane.bars) {
      lane.depths.push(bar.depth);
      lane.maxDepth = Math.max(lane.maxDepth, bar.depth);
    }
    lane.maxEnd = runningMaxEnds(lane.bars, win.startAt);
  }
  runMarkers.sort((a, b) => a.seq - b.seq);
  return { lanes, runMarkers, hasRunRow: win.runMarkerCount > 0 || runMarkers.length > 0, extent: runExtent(win) };
}

function emptyLane(id: string, label: string, stage: number, maxDepth: number): LaneIndex {
  return { id, label, stage, bars: [], depths: [], maxEnd: { time: [], seq: [] }, markers: [], maxDepth };
}

/** What to ask `run.timelineWindow` for: absent bounds mean the whole run. */
export interface WindowLoad {
  from?: number;
  to?: number;
  px: number;
}

/** A loaded window serves the view while it covers it at no coarser than this × the view's resolution. */
const MAX_COARSENESS = 1.5;

/**
 * Whether `loaded` (what was asked or answered, in axis units) can draw the visible window `view`
 * on `widthPx` pixels: it covers the view, and one of its pixels spans at most MAX_COARSENESS of
 * the view's (else merged bars would show as blocks until the next load).
 */
export function loadServes(loaded: { from: number; to: number; px: number }, view: [number, number], widthPx: number): boolean {
  const eps = 1e-6 * Math.max(1, Math.abs(view[1]));
  if (loaded.from > view[0] + eps || loaded.to < view[1] - eps) return false;
  const loadedUnitsPerPx = (loaded.to - loaded.from) / Math.max(1, loaded.px);
  const viewUnitsPerPx = (view[1] - view[0]) / Math.max(1, widthPx);
  return loadedUnitsPerPx <= viewUnitsPerPx * MAX_COARSENESS;
}

/**
 * The window to load for a view: the whole run when the view fits it (`fit`), else the view with
 * one view's width of margin on each side (inside the run), so panning draws from what is loaded
 * and a new load is needed only every view-width or so, at the view's resolution.
 */
export function planLoad(view: [number, number], extent: [number, number], widthPx: number, fit: boolean): WindowLoad {
  const width = Math.max(1, Math.round(widthPx));
  if (fit) return { px: width };
  const span = Math.max(1e-9, view[1] - view[0]);
  const from = Math.max(extent[0], view[0] - span);
  const to = Math.min(extent[1], view[1] + span);
  return { from, to, px: Math.min(MAX_WINDOW_PX, Math.max(1, Math.ceil((width * (to - from)) / span))) };
}

export interface PlacedBar {
  bar: TimelineWindowBar;
  left: number;
  width: number;
  depth: number;
  /** How many bars were merged into this one because they shared the same pixels. */
  merged: number;
}

/**
 * Bars of one lane that intersect [from, to], placed in pixels (`pxPerUnit`), with bars that fall
 * on the same pixels merged so the DOM never holds more elements than the lane is wide.
 * Bars within a lane are sorted by start; the first candidate is found by binary search on the
 * running maximum of ends (bars may nest, so ends alone are not sorted).
 */
export function placeBars(
  lane: LaneIndex,
  axis: TimelineAxis,
  t0: number,
  from: number,
  to: number,
  pxPerUnit: number,
): PlacedBar[] {
  return placeLaneBars(lane, axis, t0, from, to, pxPerUnit, {
    // An entry the engine already merged stays merged: it stands for `bar.merged` steps.
    open: (bar, depth, left, width): PlacedBar => ({ bar, left, width, depth, merged: bar.merged }),
    merge: (placed, bar, right) => {
      placed.width = right - placed.left;
      placed.merged += bar.merged;
      if (bar.status === 'failed') placed.bar = bar;
    },
  });
}

export interface PlacedMarker {
  marker: TimelineWindowMarker;
  left: number;
  merged: number;
}

/** Markers inside [from, to], at most one per MARKER_MERGE_PX pixels per kind (the rest are counted). */
export function placeMarkers(
  markers: TimelineWindowMarker[],
  axis: TimelineAxis,
  t0: number,
  from: number,
  to: number,
  pxPerUnit: number,
): PlacedMarker[] {
  return placeLaneMarkers(markers, axis, t0, from, to, pxPerUnit, {
    open: (marker, left): PlacedMarker => ({ marker, left, merged: marker.merged }),
    merge: (placed, marker) => {
      placed.merged += marker.merged;
    },
  });
}

/** A zoom about `anchor` (in axis units) by `factor` (>1 zooms in), kept inside the extent. */
export function zoomWindow(
  view: [number, number],
  extent: [number, number],
  anchor: number,
  factor: number,
  minSpan: number,
): [number, number] {
  const span = view[1] - view[0];
  const fullSpan = extent[1] - extent[0];
  const nextSpan = Math.min(fullSpan, Math.max(minSpan, span / factor));
  const ratio = span > 0 ? (anchor - view[0]) / span : 0.5;
  const start = anchor - ratio * nextSpan;
  return clampWindow([start, start + nextSpan], extent);
}

export function clampWindow(view: [number, number], extent: [number, number]): [number, number] {
  const span = Math.min(view[1] - view[0], extent[1] - extent[0]);
  let start = view[0];
  if (start < extent[0]) start = extent[0];
  if (start + span > extent[1]) start = extent[1] - span;
  return [start, start + span];
}
