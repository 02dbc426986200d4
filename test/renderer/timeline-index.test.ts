/**
 * Timeline geometry in the renderer: lanes and nesting from a `run.timelineWindow` answer (built
 * here by the engine's own window index), the visible-window search (which must not miss a bar
 * that started before the window and still covers it), pixel merging that bounds the DOM and
 * keeps the engine's merge counts, zoom/pan windows that stay inside the run, and the rule that
 * decides when a loaded window no longer serves the view.
 */
import { describe, expect, it } from 'vitest';
import { TimelineWindowIndex } from '../../engine/inspect/timeline-window.js';
import type { TimelineBar, TimelineModel, TimelineWindow, TimelineWindowMarker } from '../../renderer/src/lib/protocol.js';
import { buildTimelineIndex, clampWindow, loadServes, placeBars, placeMarkers, planLoad, runExtent, zoomWindow } from '../../renderer/src/lib/timeline-index.js';
import { niceStep, ticks } from '../../renderer/src/lib/ticks.js';

function bar(laneId: string, startSeq: number, endSeq: number, stepPath = `${laneId}/${startSeq}`): TimelineBar {
  return { laneId, stepPath, stepType: 'get', line: 1, startSeq, endSeq, startAt: 1000 + startSeq * 10, endAt: 1000 + endSeq * 10, status: 'completed' };
}

function runModel(bars: TimelineBar[], lastSeq: number): TimelineModel {
  return {
    runId: 'r',
    startAt: 1000,
    endAt: 1000 + lastSeq * 10,
    lastSeq,
    lanes: [{ id: 'A', label: 'A · stage 1', stage: 0 }],
    bars,
    markers: [
      { laneId: 'A', seq: 5, at: 1050, kind: 'effect', label: 'GET' },
      { laneId: null, seq: 7, at: 1070, kind: 'crash', label: 'SIGKILL' },
    ],
  };
}

/** The engine's answer for the whole run (every bar, unmerged unless `px`), as the renderer receives it. */
function model(bars: TimelineBar[], lastSeq: number, query: { from?: number; to?: number; px?: number } = {}): TimelineWindow {
  return new TimelineWindowIndex(runModel(bars, lastSeq)).window({ axis: 'seq', ...query });
}

describe('buildTimelineIndex', () => {
  it('groups bars per lane, computes nesting depth and keeps run-level markers apart', () => {
    const index = buildTimelineIndex(model([bar('A', 10, 12), bar('A', 2, 20, 'A/1'), bar('A', 3, 4), bar('B', 1, 2)], 20));
    const a = index.lanes.find((l) => l.id === 'A')!;
    expect(a.bars.map((b) => b.startSeq)).toEqual([2, 3, 10]);
    expect(a.depths).toEqual([0, 1, 1]);
    expect(a.maxDepth).toBe(1);
    // A lane that only bars name still gets a row.
    expect(index.lanes.map((l) => l.id)).toEqual(['A', 'B']);
    expect(a.markers.map((m) => m.kind)).toEqual(['effect']);
    expect(index.runMarkers.map((m) => m.kind)).toEqual(['crash']);
    expect(index.hasRunRow).toBe(true);
    expect(index.extent.seq).toEqual([0, 21]);
    expect(index.extent.time).toEqual([0, 200]);
  });
});

describe('placeBars', () => {
  it('finds an enclosing bar that started before the window', () => {
    const index = buildTimelineIndex(model([bar('A', 1, 100, 'A/0'), bar('A', 2, 3), bar('A', 4, 5), bar('A', 60, 61)], 100));
    const placed = placeBars(index.lanes[0]!, 'seq', 1000, 50, 70, 10);
    expect(placed.map((p) => p.bar.stepPath)).toEqual(['A/0', 'A/60']);
    expect(placed[0]!.left).toBeLessThan(0);
    expect(placed[1]!.left).toBe(100);
    expect(placed[1]!.depth).toBe(1);
  });

  it('merges bars that share pixels, so 100k bars become about one element per pixel', () => {
    const bars = Array.from({ length: 100_000 }, (_, i) => bar('A', i + 1, i + 1));
    const index = buildTimelineIndex(model(bars, 100_000));
    const width = 1000;
    const placed = placeBars(index.lanes[0]!, 'seq', 1000, 0, 100_001, width / 100_001);
    expect(placed.length).toBeLessThanOrEqual(width);
    expect(placed.reduce((n, p) => n + p.merged, 0)).toBe(100_000);
  });

  it('keeps the counts of entries the engine already merged', () => {
    const bars = Array.from({ length: 10_000 }, (_, i) => bar('A', i + 1, i + 1));
    const win = model(bars, 10_000, { px: 500 });
    expect(win.bars.length).toBeLessThan(10_000);
    // Drawn on fewer pixels than it was merged for: merges further, and still counts every step.
    const placed = placeBars(buildTimelineIndex(win).lanes[0]!, 'seq', 1000, 0, 10_001, 250 / 10_001);
    expect(placed.length).toBeLessThanOrEqual(win.bars.length);
    expect(placed.reduce((n, p) => n + p.merged, 0)).toBe(10_000);
  });

  it('keeps a failed bar visible inside a merged group', () => {
    const bars = Array.from({ length: 50 }, (_, i) => bar('A', i + 1, i + 1));
    bars[20] = { ...bars[20]!, status: 'failed' };
    const placed = placeBars(buildTimelineIndex(model(bars, 50)).lanes[0]!, 'seq', 1000, 0, 51, 0.5);
    expect(placed.some((p) => p.bar.status === 'failed')).toBe(true);
  });

  it('places by wall time on the time axis', () => {
    const index = buildTimelineIndex(model([bar('A', 10, 20)], 20));
    const [p] = placeBars(index.lanes[0]!, 'time', 1000, 0, 200, 1);
    expect(p!.left).toBe(100);
    expect(p!.width).toBe(100);
  });
});

describe('placeMarkers', () => {
  it('thins markers of one kind closer than 6 px and counts the rest', () => {
    const markers: TimelineWindowMarker[] = Array.from({ length: 10 }, (_, i) => ({ laneId: 'A', seq: i + 1, at: 1000 + i, kind: 'effect' as const, label: '', merged: i === 0 ? 5 : 1 }));
    const placed = placeMarkers(markers, 'seq', 1000, 0, 20, 2);
    expect(placed.length).toBeLessThan(10);
    // The first one already stood for 5 markers the engine merged.
    expect(placed.reduce((n, p) => n + p.merged, 0)).toBe(14);
  });
});

describe('zoom and pan windows', () => {
  it('zooms about the anchor and never leaves the extent', () => {
    const zoomed = zoomWindow([0, 100], [0, 100], 75, 2, 1);
    expect(zoomed[1] - zoomed[0]).toBe(50);
    expect(zoomed[0]).toBeCloseTo(37.5);
    expect(zoomWindow([0, 100], [0, 100], 50, 0.1, 1)).toEqual([0, 100]);
    expect(zoomWindow([0, 10], [0, 100], 5, 1000, 4)).toEqual([3, 7]);
  });

  it('clamps a panned window to the run', () => {
    expect(clampWindow([-20, 30], [0, 100])).toEqual([0, 50]);
    expect(clampWindow([80, 130], [0, 100])).toEqual([50, 100]);
  });
});

describe('loading windows', () => {
  it('loads the whole run to fit it, else the view with a view of margin each side, inside the run', () => {
    expect(planLoad([0, 1001], [0, 1001], 800.4, true)).toEqual({ px: 800 });
    expect(planLoad([400, 500], [0, 1001], 800, false)).toEqual({ from: 300, to: 600, px: 2400 });
    // At the run's start the margin is cut, and the pixels with it.
    expect(planLoad([0, 100], [0, 1001], 800, false)).toEqual({ from: 0, to: 200, px: 1600 });
  });

  it('serves a view it covers at no coarser than 1.5 × its resolution, else asks again', () => {
    const loaded = { from: 300, to: 600, px: 2400 };
    expect(loadServes(loaded, [400, 500], 800)).toBe(true);
    // Panned inside the margin: still served; past it: not.
    expect(loadServes(loaded, [480, 580], 800)).toBe(true);
    expect(loadServes(loaded, [550, 650], 800)).toBe(false);
    // Zoomed in 1.25×: still served; 2×: the merged bars would be too coarse.
    expect(loadServes(loaded, [410, 490], 800)).toBe(true);
    expect(loadServes(loaded, [425, 475], 800)).toBe(false);
  });

  it('takes the run extent from the answer, as the engine computes it', () => {
    const win = model([bar('A', 1, 2)], 20, { from: 5, to: 6 });
    expect(runExtent(win)).toEqual({ seq: [0, 21], time: [0, 200] });
    expect(new TimelineWindowIndex(runModel([bar('A', 1, 2)], 20)).extent('time')).toEqual(runExtent(win).time);
  });
});

describe('ruler ticks', () => {
  it('picks 1-2-5 steps about 110 px apart', () => {
    expect(niceStep(1000, 1100)).toBe(100);
    expect(niceStep(1000, 550)).toBe(200);
    expect(niceStep(7, 1000)).toBe(1);
    expect(ticks(15, 62, 10)).toEqual([20, 30, 40, 50, 60]);
  });
});
