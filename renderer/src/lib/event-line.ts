/**
 * What one event says, in a few words, for its row in the Events list: the request it sent
 * (`POST /confirmations`), the answer (`→ 422`), the record stored (`orders ← o-1001`), the
 * error. The payload itself is one click away in the preview; this is for reading down a list.
 */
import type { StoredEvent } from './protocol.js';
import { pathOf } from './step-summary.js';
import { visibleControls } from './visible-text.js';

/** Bidi controls in the run's data (a store key, an error message) are shown escaped (visible-text.ts). */
export function eventLine(event: StoredEvent): string {
  try {
    return visibleControls(rawEventLine(event));
  } catch {
    // Import refuses events the views cannot read (parseReadableBundle), but a log may hold runs imported before it did.
    return '(payload not as expected for this event type)';
  }
}

function rawEventLine(event: StoredEvent): string {
  switch (event.type) {
    case 'run.started':
      return event.payload.forkedFrom ? `${event.payload.mission}, forked from ${event.payload.forkedFrom.runId} at #${event.payload.forkedFrom.atSeq}` : event.payload.mission;
    case 'run.resumed':
      return `${event.payload.reason}, replay from #${event.payload.replayFromSeq}`;
    case 'run.suspended':
      return event.payload.reason;
    case 'run.failed':
    case 'stage.failed':
    case 'action.failed':
    case 'step.failed':
    case 'http.error':
      return event.payload.error.message;
    case 'action.started':
      return event.payload.attempt > 1 ? `${event.payload.action}, attempt ${event.payload.attempt}` : event.payload.action;
    case 'step.started':
      return `${event.payload.stepType}, line ${event.payload.line}`;
    case 'step.completed':
      return event.payload.stepType + (event.payload.bind ? ` → ${event.payload.bind.name}` : '');
    case 'loop.iteration':
      return `[${event.payload.index}] ${event.payload.key}${event.payload.skipped ? ' (skipped)' : ''}`;
    case 'value.recorded':
      return event.payload.source;
    case 'http.request':
      return `${event.payload.request.method} ${pathOf(event.payload.request.url)}`;
    case 'http.response':
      return `→ ${event.payload.response.status} ${event.payload.verdict}`;
    case 'fetch.completed':
      return `${event.payload.status}, ${event.payload.pages} page${event.payload.pages === 1 ? '' : 's'}${event.payload.items !== undefined ? `, ${event.payload.items} items` : ''}`;
    case 'store.write':
      return `${event.payload.store} ← ${event.payload.key}${event.payload.removed ? ' (removed)' : ''}`;
    case 'checkpoint.advanced':
      return event.payload.key;
    case 'page.completed':
      return `page ${event.payload.page}, ${event.payload.records} records`;
    case 'pause.resumed':
      return `by ${event.payload.by}`;
    case 'wait.registered':
      return event.payload.path;
    default:
      return '';
  }
}

/** `Sync/1[4]/0[2]/1` → `Sync/1[*]/0[*]/1`: the same step in every iteration (a step filter); null outside a loop. */
export function everyIteration(stepPath: string): string | null {
  const wild = stepPath.replace(/\[\d+\]/g, '[*]');
  return wild === stepPath ? null : wild;
}
