/**
 * What a step did, in one line, from its own events (the selected bar's seq range of the log):
 * its requests and the answer each got (`POST /confirmations → 201`, `→ 422`, or the transport
 * error), the records it stored, and the failure that ended it — so a failed step shows its
 * request, the API's answer and the message where it is selected, not only a red bar.
 */
import type { StoredEvent } from './protocol.js';

export interface StepSummary {
  /** `POST /confirmations → 201`, one per request, in order (a retried request once, with its last answer). */
  requests: string[];
  /** The body of the last answer that was not a success (what a 422 said), if any. */
  failedBody: unknown;
  stored: number;
  /** The `step.failed` of the step itself: its seq and message. */
  failure: { seq: number; message: string } | null;
}

/** A request URL as the path and query a reader looks for (the base is the source's). */
export function pathOf(url: string): string {
  try {
    const u = new URL(url);
    return u.pathname + u.search;
  } catch {
    return url;
  }
}

/** The summary of the step at `stepPath` from events of its range (events of nested steps count too). */
export function summariseStep(stepPath: string, events: readonly StoredEvent[]): StepSummary {
  const byEffect = new Map<string, { method: string; url: string; answer: string }>();
  let failedBody: unknown;
  let stored = 0;
  let failure: StepSummary['failure'] = null;
  for (const event of events) {
    switch (event.type) {
      case 'http.request': {
        const { effectId, request } = event.payload;
        const known = byEffect.get(effectId);
        byEffect.set(effectId, { method: request.method, url: request.url, answer: known?.answer ?? '…' });
        break;
      }
      case 'http.response': {
        const { effectId, response, verdict } = event.payload;
        const known = byEffect.get(effectId);
        if (known) known.answer = String(response.status);
        if (verdict !== 'success' && verdict !== 'allowed') failedBody = response.body;
        break;
      }
      case 'http.error': {
        const known = byEffect.get(event.payload.effectId);
        if (known) known.answer = event.payload.error.code;
        break;
      }
      case 'store.write':
        stored += 1;
        break;
      case 'step.failed':
        if (event.stepPath === stepPath) failure = { seq: event.seq, message: event.payload.error.message };
        break;
      default:
        break;
    }
  }
  const requests = [...byEffect.values()].map((r) => `${r.method} ${pathOf(r.url)} → ${r.answer}`);
  return { requests, failedBody, stored, failure };
}
