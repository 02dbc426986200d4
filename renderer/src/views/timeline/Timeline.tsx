/**
 * The per-step timeline: one lane per action (and pipeline stage), bars for steps, markers for
 * effects, retries, crashes, resumes, timers, pauses, webhooks, errors and checkpoints. The
 * engine computes the timeline and answers one window of it at a time (`run.timelineWindow`:
 * lanes, extent and totals, plus only the bars and markers of the window, already merged at the
 * requested pixel width); this view only places them. So the first paint of a 100k-event run
 * ships a few hundred entries, not the whole model. Zoom with the wheel or buttons, pan by
 * dragging: the loaded window has a view's width of margin on each side and is replaced only
 * when the view leaves it or zooms past its resolution, and the previous one stays on screen
 * until the next arrives. Lanes are virtualised. While the run executes, 'run.appended' reloads
 * the window (throttled) and a view that showed the end keeps following it.
 */
import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { useVirtualizer } from '@tanstack/react-virtual';
import { useStudio } from '../../store/studio-store.js';
import { useRequest, useRunAppended } from '../../lib/use-request.js';
import { useElementWidth } from '../../lib/use-element-width.js';
import {
  buildTimelineIndex,
  clampWindow,
  loadServes,
  planLoad,
  runExtent,
  zoomWindow,
  RUN_LANE_ID,
  type TimelineAxis,
  type WindowLoad,
} from '../../lib/timeline-index.js';
import { TimelineToolbar } from './TimelineToolbar.js';
import { TimelineLegend } from './TimelineLegend.js';
import { TimelineRuler } from './TimelineRuler.js';
import { TimelineLane } from './TimelineLane.js';
import { TimelineSelection } from './TimelineSelection.js';

export const TIMELINE_LABEL_WIDTH = 190;
/** Sub-row per nesting level (a `for` bar above its body's bars), then a strip for markers. */
export const TIMELINE_DEPTH_HEIGHT = 17;
const MAX_SHOWN_DEPTH = 3;
const laneHeight = (maxDepth: number) => 12 + (Math.min(maxDepth, MAX_SHOWN_DEPTH) + 1) * TIMELINE_DEPTH_HEIGHT + 16;

export function Timeline({ runId }: { runId: string }) {
  const selectSeq = useStudio((s) => s.selectSeq);
  const selectedSeq = useStudio((s) => s.selectedSeq);
  const [axis, setAxis] = useState<TimelineAxis>('seq');
  // null = fit the whole run (and keep fitting as it grows); otherwise the user's window.
  const [view, setView] = useState<[number, number] | null>(null);
  const [follow, setFollow] = useState(true);
  const trackRef = useRef<HTMLDivElement>(null);
  const [measureRef, laneWidth, scrollRef] = useElementWidth<HTMLDivElement>();
  const width = Math.max(0, laneWidth - TIMELINE_LABEL_WIDTH);
  // Before the lanes are measured (they mount with the first answer), ask at the window's width:
  // at least as fine as the track will be, so the first answer is drawn as it is.
  const loadWidth = width > 0 ? width : Math.max(1, window.innerWidth);

  // The window asked for: first the whole run at the window's width, then what planLoad picks.
  const [load, setLoad] = useState<WindowLoad>(() => ({ px: Math.max(1, Math.round(loadWidth)) }));
  const timeline = useRequest('run.timelineWindow', { runId, axis, ...load });
  useRunAppended(runId, timeline.reload, 500);

  const model = timeline.data;
  const index = useMemo(() => (model ? buildTimelineIndex(model) : null), [model]);
  const extent: [number, number] = model ? runExtent(model)[axis] : [0, 1];
  const minSpan = axis === 'seq' ? 8 : 5;

  // Following: keep the user's zoom level but slide the window to the newest events.
  const prevExtentEnd = useRef(extent[1]);
  useEffect(() => {
    if (view && follow && prevExtentEnd.current !== extent[1] && view[1] >= prevExtentEnd.current - 1e-9) {
      setView(clampWindow([extent[1] - (view[1] - view[0]), extent[1]], extent));
    }
    prevExtentEnd.current = extent[1];
  }, [extent[1]]); // eslint-disable-line react-hooks/exhaustive-deps

  const win: [number, number] = view ? clampWindow(view, extent) : extent;
  const pxPerUnit = width > 0 ? width / Math.max(1e-9, win[1] - win[0]) : 0;

  // Load another window when the answered one no longer serves the view. An answer in the other
  // axis (just switched) never serves; a whole-run answer serves any view at its resolution.
  useEffect(() => {
    if (!model) return;
    const answered = model.axis === axis ? { from: model.from, to: model.to, px: model.px ?? Number.MAX_SAFE_INTEGER } : null;
    if (answered && loadServes(answered, win, loadWidth)) return;
    const next = planLoad(win, extent, loadWidth, view === null);
    // Already asked for exactly this (its answer is on the way): do not ask again.
    if (next.from === load.from && next.to === load.to && next.px === load.px) return;
    setLoad(next);
  }, [model, axis, win[0], win[1], extent[0], extent[1], loadWidth, view === null]); // eslint-disable-line react-hooks/exhaustive-deps

  const zoom = useCallback(
    (factor: number, anchorPx?: number) => {
      const anchor = anchorPx === undefined ? (win[0] + win[1]) / 2 : win[0] + anchorPx / Math.max(pxPerUnit, 1e-9);
      setView(zoomWindow(win, extent, anchor, factor, minSpan));
      setFollow(false);
    },
    [win[0], win[1], extent[0], extent[1], pxPerUnit, minSpan], // eslint-disable-line react-hooks/exhaustive-deps
  );

  // Wheel zoom needs a non-passive listener to stop the page from scrolling.
  useEffect(() => {
    const el = trackRef.current;
    if (!el) return;
    const onWheel = (e: WheelEvent) => {
      if (e.shiftKey) return; // shift+wheel scrolls lanes vertically as usual
      e.preventDefault();
      const rect = el.getBoundingClientRect();
      const x = e.clientX - rect.left - TIMELINE_LABEL_WIDTH;
      if (x < 0) return;
      zoom(e.deltaY < 0 ? 1.25 : 0.8, x);
    };
    el.addEventListener('wheel', onWheel, { passive: false });
    return () => el.removeEventListener('wheel', onWheel);
  }, [zoom]);

  const drag = useRef<{ x: number; view: [number, number]; moved: boolean } | null>(null);
  const onPointerDown = (e: React.PointerEvent) => {
    if (e.button !== 0) return;
    drag.current = { x: e.clientX, view: win, moved: false };
  };
  const onPointerMove = (e: React.PointerEvent) => {
    const d = drag.current;
    if (!d || pxPerUnit <= 0) return;
    const dx = e.clientX - d.x;
    if (Math.abs(dx) > 3) d.moved = true;
    if (!d.moved) return;
    (e.currentTarget as HTMLElement).setPointerCapture?.(e.pointerId);
    const shift = -dx / pxPerUnit;
    setView(clampWindow([d.view[0] + shift, d.view[1] + shift], extent));
    setFollow(false);
  };
  const onPointerUp = (e: React.PointerEvent) => {
    const d = drag.current;
    drag.current = null;
    if (d?.moved) {
      // A drag is not a click: swallow the click that follows on the bar under the pointer.
      const el = e.currentTarget as HTMLElement;
      const stop = (ev: Event) => ev.stopPropagation();
      el.addEventListener('click', stop, { capture: true, once: true });
      setTimeout(() => el.removeEventListener('click', stop, { capture: true }), 0);
    }
  };

  const rows = useMemo(() => {
    if (!index) return [];
    const lanes = index.lanes.map((lane) => ({ id: lane.id, lane }));
    return index.hasRunRow
      ? [{ id: RUN_LANE_ID, lane: { id: RUN_LANE_ID, label: 'run', stage: -1, bars: [], depths: [], maxEnd: { time: [], seq: [] }, markers: index.runMarkers, maxDepth: -1 } }, ...lanes]
      : lanes;
  }, [index]);

  const virtualizer = useVirtualizer({
    count: rows.length,
    getScrollElement: () => scrollRef.current,
    estimateSize: (i) => (rows[i]!.lane.maxDepth < 0 ? 30 : laneHeight(rows[i]!.lane.maxDepth)),
    overscan: 6,
  });

  const onSelect = useCallback((seq: number) => selectSeq(seq), [selectSeq]);

  if (timeline.error && !model) {
    return (
      <div className="view-error" role="alert">
        Could not load the timeline — {timeline.error.code}: {timeline.error.message}
        <button onClick={timeline.reload}>Retry</button>
      </div>
    );
  }
  if (!model || !index) return <div className="view-loading">Loading timeline…</div>;

  return (
    <div className="timeline" aria-label="Timeline">
      <TimelineToolbar
        axis={axis}
        onAxis={(a) => {
          if (a === axis) return;
          setAxis(a);
          setView(null);
          setFollow(true);
          setLoad({ px: Math.max(1, Math.round(loadWidth)) });
        }}
        onZoomIn={() => zoom(1.5)}
        onZoomOut={() => zoom(1 / 1.5)}
        onFit={() => {
          setView(null);
          setFollow(true);
        }}
        window={win}
        model={model}
        lanes={index.lanes.length}
      />
      <TimelineLegend />
      <div
        className="timeline-track"
        ref={trackRef}
        onPointerDown={onPointerDown}
        onPointerMove={onPointerMove}
        onPointerUp={onPointerUp}
        onPointerCancel={() => (drag.current = null)}
      >
        <TimelineRuler axis={axis} window={win} width={width} labelWidth={TIMELINE_LABEL_WIDTH} />
        <div className="timeline-lanes" ref={measureRef} role="list" aria-label="Timeline lanes">
          <div style={{ height: virtualizer.getTotalSize(), position: 'relative' }}>
            {virtualizer.getVirtualItems().map((item) => {
              const row = rows[item.index]!;
              return (
                <div key={row.id} className="timeline-row" role="listitem" style={{ transform: `translateY(${item.start}px)`, height: item.size }}>
                  <TimelineLane
                    lane={row.lane}
                    axis={axis}
                    t0={model.startAt}
                    from={win[0]}
                    to={win[1]}
                    pxPerUnit={pxPerUnit}
                    width={width}
                    labelWidth={TIMELINE_LABEL_WIDTH}
                    selectedSeq={selectedSeq}
                    onSelect={onSelect}
                  />
                </div>
              );
            })}
          </div>
          {axis === 'seq' && selectedSeq !== null && selectedSeq >= win[0] && selectedSeq <= win[1] && (
            <div className="timeline-cursor" style={{ left: TIMELINE_LABEL_WIDTH + (selectedSeq - win[0]) * pxPerUnit }} aria-hidden="true" />
          )}
        </div>
      </div>
      {selectedSeq !== null && <TimelineSelection runId={runId} lastSeq={model.lastSeq} seq={selectedSeq} />}
    </div>
  );
}
