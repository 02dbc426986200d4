/**
 * The channel names of the studio protocol as runtime values, for allow-lists (Electron's IPC
 * handler, the HTTP router) and the snapshot test.
 *
 * Invariant: each list holds exactly the keys of its map in protocol.ts — the `Exact` checks below
 * fail to compile when a channel is added to the types but not here, or the other way round.
 */
import type { PushChannel, RequestChannel } from './protocol.js';

export const REQUEST_CHANNELS = [
  'runs.list',
  'run.get',
  'run.events',
  'run.eventSearch',
  'run.timeline',
  'run.timelineWindow',
  'run.stateAt',
  'run.stateDiff',
  'run.source',
  'run.verify',
  'run.start',
  'run.resume',
  'run.fork',
  'run.export',
  'run.import',
  'run.crash',
  'run.watch',
  'crash.points',
  'crashlab.start',
  'crashlab.chaos',
  'crashlab.verdict',
  'crashlab.ofRun',
  'studio.info',
] as const satisfies readonly RequestChannel[];

export const PUSH_CHANNELS = ['run.appended', 'runs.changed', 'process.exited', 'crashlab.changed'] as const satisfies readonly PushChannel[];

type Exact<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const requestsComplete: Exact<(typeof REQUEST_CHANNELS)[number], RequestChannel> = true;
const pushesComplete: Exact<(typeof PUSH_CHANNELS)[number], PushChannel> = true;
void requestsComplete;
void pushesComplete;

const requestSet: ReadonlySet<string> = new Set(REQUEST_CHANNELS);

export function isRequestChannel(name: string): name is RequestChannel {
  return requestSet.has(name);
}
