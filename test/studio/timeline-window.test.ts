/**
 * The timeline window index (engine/inspect/timeline-window.ts): a window returns exactly the bars
 * and markers that intersect it — checked against a brute-force filter on random timelines, on
 * both axes — and with a pixel width the merged answer still accounts for every one of them, in
 * about one entry per pixel. Bad windows are refused with a message that names the field.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TimelineWindowIndex } from '../../engine/inspect/timeline-window.js';
import { runFold } from '../../engine/inspect/fold-handler.js';
import { TimelineHandler } from '../../engine/inspect/timeline.js';
import type { MarkerKind, TimelineAxis, TimelineBar, TimelineMarker, TimelineModel } from '../../engine/protocol/protocol.js';
import { sampleRun } from './event-builder.js';

const T0 = 1_000_000;
/** Time grows with seq, as recordedAt does along a run (never decreasing). */
const atOf = (seq: number) => T0 + seq * 7;

function bar(laneId: string, startSeq: number, endSeq: number, status: TimelineBar['status'] = 'completed'): TimelineBar {
  return { laneId, stepPath: `${laneId}/${startSeq}-${endSeq}`, stepType: 'get', line: 1, startSeq, endSeq, startAt: atOf(startSeq), endAt: atOf(endSeq), status };
}

function marker(laneId: string | null, seq: number, kind: MarkerKind = 'effect'): TimelineMarker {
  return { laneId, seq, at: atOf(seq), kind, label: `${kind} ${seq}` };
}

function model(bars: TimelineBar[], markers: TimelineMarker[], lastSeq: number): TimelineModel {
  return {
    runId: 'r',
    startAt: atOf(1),
    endAt: atOf(lastSeq),
    lastSeq,
    lanes: [
      { id: 'A', label: 'A · stage 1', stage: 0 },
      { id: 'B', label: 'B · stage 1', stage: 0 },
    ],
    bars,
    markers,
  };
}

const pos = (axis: TimelineAxis, seq: number, at: number) => (axis === 'seq' ? seq : at - atOf(1));
const barKey = (b: TimelineBar) => `${b.laneId}|${b.stepPath}|${b.startSeq}`;
const markerKey = (m: TimelineMarker) => `${m.laneId}|${m.kind}|${m.seq}`;
const laneRank = (id: string | null) => (id === 'A' ? 0 : id === 'B' ? 1 : 2);

/** Random bars on lanes A and B (any overlaps, nested or not) and markers, some run-level. */
const timelineArb = fc
  .record({
    bars: fc.array(fc.record({ lane: fc.constantFrom('A', 'B'), start: fc.integer({ min: 1, max: 300 }), len: fc.integer({ min: 0, max: 60 }), failed: fc.boolean() }), { maxLength: 80 }),
    markers: fc.array(fc.record({ lane: fc.constantFrom<'A' | 'B' | null>('A', 'B', null), seq: fc.integer({ min: 1, max: 360 }), kind: fc.constantFrom<MarkerKind>('effect', 'retry', 'crash') }), { maxLength: 60 }),
  })
  .map(({ bars, markers }) =>
    model(
      bars.map((b) => bar(b.lane, b.start, b.start + b.len, b.failed ? 'failed' : 'completed')),
      markers.map((m) => marker(m.lane, m.seq, m.kind)),
      360,
    ),
  );

/** Windows in axis units, ordered; integer bounds often, so bounds land exactly on bar ends and markers. */
const windowArb = fc
  .oneof(
    fc.tuple(fc.constant<TimelineAxis>('seq'), fc.integer({ min: -5, max: 370 }), fc.integer({ min: -5, max: 370 })),
    fc.tuple(fc.constant<TimelineAxis>('seq'), fc.double({ min: -5, max: 370, noNaN: true }), fc.double({ min: -5, max: 370, noNaN: true })),
    fc.tuple(fc.constant<TimelineAxis>('time'), fc.integer({ min: -5, max: 370 }).map((n) => n * 7), fc.integer({ min: -5, max: 370 }).map((n) => n * 7)),
    fc.tuple(fc.constant<TimelineAxis>('time'), fc.double({ min: -50, max: 2600, noNaN: true }), fc.double({ min: -50, max: 2600, noNaN: true })),
  )
  .map(([axis, a, b]) => ({ axis, from: Math.min(a, b), to: Math.max(a, b) }));

describe('TimelineWindowIndex', () => {
  it('answers exactly the bars and markers that intersect the window, on both axes', () => {
    fc.assert(
      fc.property(timelineArb, windowArb, (m, { axis, from, to }) => {
        const answer = new TimelineWindowIndex(m).window({ axis, from, to });
        const wantBars = m.bars
          .filter((x) => pos(axis, x.startSeq, x.startAt) <= to && pos(axis, x.endSeq, x.endAt) >= from)
          .sort((x, y) => laneRank(x.laneId) - laneRank(y.laneId) || x.startSeq - y.startSeq || y.endSeq - x.endSeq);
        const wantMarkers = m.markers
          .filter((x) => pos(axis, x.seq, x.at) >= from && pos(axis, x.seq, x.at) <= to)
          .sort((x, y) => laneRank(x.laneId) - laneRank(y.laneId) || x.seq - y.seq);
        expect(answer.bars.map(barKey)).toEqual(wantBars.map(barKey));
        expect(answer.bars.every((x) => x.merged === 1)).toBe(true);
        expect(answer.markers.map(markerKey).sort()).toEqual(wantMarkers.map(markerKey).sort());
        // Run-level markers come after every lane's.
        expect(answer.markers.map((x) => laneRank(x.laneId))).toEqual([...answer.markers.map((x) => laneRank(x.laneId))].sort());
        expect([answer.from, answer.to, answer.axis, answer.px]).toEqual([from, to, axis, null]);
      }),
      { numRuns: 1000 },
    );
  });

  it('with a pixel width, merges neighbours but accounts for every intersecting bar and marker', () => {
    fc.assert(
      fc.property(timelineArb, windowArb, fc.integer({ min: 1, max: 400 }), (m, { axis, from, to }, px) => {
        const index = new TimelineWindowIndex(m);
        const exact = index.window({ axis, from, to });
        const merged = index.window({ axis, from, to, px });
        expect(merged.bars.reduce((n, x) => n + x.merged, 0)).toBe(exact.bars.length);
        expect(merged.markers.reduce((n, x) => n + x.merged, 0)).toBe(exact.markers.length);
        // Each merged entry starts at a real bar and spans the bars folded into it, failures kept.
        const exactByLaneDepth = new Map<string, typeof exact.bars>();
        for (const x of exact.bars) exactByLaneDepth.set(`${x.laneId}|${x.depth}`, [...(exactByLaneDepth.get(`${x.laneId}|${x.depth}`) ?? []), x]);
        for (const [key, group] of exactByLaneDepth) {
          const entries = merged.bars.filter((x) => `${x.laneId}|${x.depth}` === key);
          let i = 0;
          for (const entry of entries) {
            const folded = group.slice(i, i + entry.merged);
            i += entry.merged;
            expect(barKey(entry)).toBe(barKey(folded[0]!));
            expect(entry.endSeq).toBe(Math.max(...folded.map((x) => x.endSeq)));
            expect(entry.status === 'failed').toBe(folded.some((x) => x.status === 'failed'));
          }
          expect(i).toBe(group.length);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('shrinks a 100k-bar lane to about one entry per pixel', () => {
    const bars = Array.from({ length: 100_000 }, (_, i) => bar('A', i + 1, i + 1));
    const markers = Array.from({ length: 100_000 }, (_, i) => marker('A', i + 1));
    const answer = new TimelineWindowIndex(model(bars, markers, 100_000)).window({ axis: 'seq', px: 1000 });
    expect(answer.bars.length).toBeLessThanOrEqual(1000);
    expect(answer.bars.reduce((n, x) => n + x.merged, 0)).toBe(100_000);
    expect(answer.markers.length).toBeLessThanOrEqual(1000 / 6 + 1);
    expect(answer.markers.reduce((n, x) => n + x.merged, 0)).toBe(100_000);
    expect([answer.barCount, answer.markerCount, answer.runMarkerCount]).toEqual([100_000, 100_000, 0]);
  });

  it('gives lanes their whole-run depth and totals, and defaults to the whole run', () => {
    const m = model([bar('A', 2, 50), bar('A', 3, 10), bar('A', 4, 5), bar('A', 60, 70), bar('C', 1, 2)], [marker('A', 4), marker(null, 30, 'crash')], 80);
    const answer = new TimelineWindowIndex(m).window({ axis: 'seq', from: 60, to: 80 });
    expect(answer.lanes).toEqual([
      { id: 'A', label: 'A · stage 1', stage: 0, maxDepth: 2, bars: 4, markers: 1 },
      { id: 'B', label: 'B · stage 1', stage: 0, maxDepth: 0, bars: 0, markers: 0 },
      // A lane only a bar names still gets a row.
      { id: 'C', label: 'C', stage: 0, maxDepth: 0, bars: 1, markers: 0 },
    ]);
    expect(answer.bars.map((x) => [x.stepPath, x.depth])).toEqual([['A/60-70', 0]]);
    expect(answer.runMarkerCount).toBe(1);
    const whole = new TimelineWindowIndex(m).window({ axis: 'time' });
    expect([whole.from, whole.to]).toEqual([0, atOf(80) - atOf(1)]);
    expect(whole.bars).toHaveLength(5);
    expect(new TimelineWindowIndex(m).window({ axis: 'seq' }).to).toBe(81);
  });

  it('a point window holds the bars that contain the seq, innermost deepest', () => {
    const m = runFold(new TimelineHandler(), sampleRun().events);
    const answer = new TimelineWindowIndex(m).window({ axis: 'seq', from: 14, to: 14 });
    expect(answer.bars.map((x) => `${x.stepPath}:${x.startSeq}-${x.endSeq}`)).toEqual(['Sync.2:13-17']);
    expect(answer.markers.map((x) => `${x.seq}:${x.kind}`)).toEqual(['14:effect']);
  });

  it('refuses bad windows with a message naming the field', () => {
    const index = new TimelineWindowIndex(model([bar('A', 1, 2)], [], 10));
    expect(() => index.window({ axis: 'seq', from: 5, to: 4 })).toThrow(/"from" \(5\) is after "to" \(4\)/);
    expect(() => index.window({ axis: 'seq', from: 20 })).toThrow(/"from" \(20\) is after "to" \(11\)/);
    expect(() => index.window({ axis: 'seq', from: Number.NaN, to: 4 })).toThrow(/"from" must be a finite number/);
    expect(() => index.window({ axis: 'seq', to: Number.POSITIVE_INFINITY })).toThrow(/"to" must be a finite number/);
    expect(() => index.window({ axis: 'seq', px: 0 })).toThrow(/"px" must be an integer from 1 to 100000/);
    expect(() => index.window({ axis: 'seq', px: 2.5 })).toThrow(RangeError);
    expect(() => index.window({ axis: 'depth' as TimelineAxis })).toThrow(/axis must be 'seq' or 'time'/);
  });
});
