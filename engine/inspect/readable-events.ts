/**
 * Whether the studio's folds can read a run's events: each is fed to the state, timeline,
 * summary and crash-point folds (then their data and the timeline's window index), and the
 * first event a fold throws on (or whose error is not { code, message }) is named. A run the
 * engine wrote always passes;
 * an imported bundle is checked with it before anything is written (run-bundle.ts checks types,
 * seqs and loggable values, not each payload's fields), so a bundle the studio could not show
 * (an http.request without its request, a step.failed whose error is a string) is refused with
 * the event named rather than imported to break every view of it.
 */
import type { StoredEvent } from '../log/events.js';
import { CrashPointsHandler } from './crash-points.js';
import type { FoldHandler } from './fold-handler.js';
import { outlineMission } from './mission-outline.js';
import { RunSummaryHandler } from './run-summary.js';
import { StateAtHandler } from './state-at.js';
import { TimelineHandler } from './timeline.js';
import { TimelineWindowIndex } from './timeline-window.js';

export interface UnreadableEvent {
  /** Index in the events given. */
  index: number;
  seq: number;
  type: string;
  message: string;
}

export function firstUnreadableEvent(
  runId: string,
  missionFiles: { entry: string; files: { path: string; text: string }[] },
  events: readonly StoredEvent[],
): UnreadableEvent | null {
  const state = new StateAtHandler(outlineMission(missionFiles), runId);
  const timeline = new TimelineHandler(runId);
  const folds: FoldHandler<unknown>[] = [state, timeline, new RunSummaryHandler(runId), new CrashPointsHandler()];
  for (const fold of folds) fold.reset();
  for (let i = 0; i < events.length; i++) {
    const event = events[i]!;
    try {
      checkError(event);
      for (const fold of folds) fold.handleEvent(event);
    } catch (error) {
      return { index: i, seq: event.seq, type: event.type, message: error instanceof Error ? error.message : String(error) };
    }
  }
  try {
    for (const fold of folds) fold.finalize();
    for (const fold of folds) fold.data();
    new TimelineWindowIndex(timeline.data()).window({ axis: 'seq' });
    new TimelineWindowIndex(timeline.data()).window({ axis: 'time' });
  } catch (error) {
    const last = events.at(-1);
    return { index: events.length - 1, seq: last?.seq ?? 0, type: last?.type ?? '', message: error instanceof Error ? error.message : String(error) };
  }
  return null;
}

const WITH_ERROR = new Set(['run.failed', 'stage.failed', 'action.failed', 'step.failed', 'http.error']);

/** The folds keep an error as they find it; the studio shows its code and message as text. */
function checkError(event: StoredEvent): void {
  if (!WITH_ERROR.has(event.type)) return;
  const error = (event.payload as { error?: unknown }).error;
  const e = error as { code?: unknown; message?: unknown; at?: unknown } | null;
  if (typeof e !== 'object' || e === null || typeof e.code !== 'string' || typeof e.message !== 'string' || (e.at !== undefined && typeof e.at !== 'string')) {
    throw new Error(`its error must be { code, message, at? } (strings), got ${JSON.stringify(error)?.slice(0, 80) ?? 'nothing'}`);
  }
}
