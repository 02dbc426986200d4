/**
 * Wires the bridge to the store: connection status, the runs list (loaded at start and again
 * after every reconnect, since pushes may have been missed while the socket was down), and the
 * live pushes. Also mirrors the selection and the Events filter into the URL hash
 * (`#run=…&tab=…&seq=…&types=…&step=…&q=…`) so a view
 * can be linked to and survives a reload.
 */
import { createBridge, setBridge, type Bridge } from './bridge.js';
import { describeFailure, toProtocolFailure } from './protocol-failure.js';
import type { StudioState } from '../store/studio-store.js';
import type { RunSummary } from './protocol.js';
import { STUDIO_TABS, type StudioTab } from '../store/selection-slice.js';

interface StoreApi {
  getState: () => StudioState;
  subscribe: (listener: (state: StudioState, prev: StudioState) => void) => () => void;
}

export interface SyncHandle {
  bridge: Bridge;
  stop: () => void;
}

function readHash(store: StoreApi): void {
  const params = new URLSearchParams(window.location.hash.replace(/^#/, ''));
  const run = params.get('run');
  const tab = params.get('tab');
  const seq = Number(params.get('seq'));
  const state = store.getState();
  if (run) state.selectRun(run);
  if (tab && STUDIO_TABS.some((t) => t.id === tab)) state.setTab(tab as StudioTab);
  if (run && Number.isInteger(seq) && seq > 0) state.selectSeq(seq);
  const types = params.get('types');
  state.setEventFilter({ ...(types ? { types: types.split(',').filter(Boolean) } : {}), step: params.get('step') ?? '', text: params.get('q') ?? '' });
}

function writeHash(state: StudioState): void {
  const params = new URLSearchParams();
  if (state.selectedRunId) params.set('run', state.selectedRunId);
  params.set('tab', state.tab);
  if (state.selectedSeq !== null) params.set('seq', String(state.selectedSeq));
  const { types, step, text } = state.eventFilter;
  if (types) params.set('types', types.join(','));
  if (step) params.set('step', step);
  if (text) params.set('q', text);
  const next = `#${params.toString()}`;
  if (window.location.hash !== next) window.history.replaceState(null, '', next);
}

export function startStudioSync(store: StoreApi): SyncHandle {
  const loadRuns = () => {
    bridge
      .invoke('runs.list', {})
      .then(({ runs, total }) => {
        store.getState().setRuns(runs, total);
        const state = store.getState();
        // Open the most recent run on first load so the studio never starts on an empty page (the page is newest first).
        if (!state.selectedRunId && runs.length > 0) state.selectRun(runs[0]!.runId);
      })
      .catch((err: unknown) => {
        console.error(`runs.list failed: ${describeFailure(err)}`);
      });
  };

  const raw = createBridge((status) => {
    store.getState().setConnection(status);
    if (status.state !== 'open') return;
    // Reload whenever pushes (re)start: 'runs.changed' sent while the socket was down are lost.
    // Deferred because the Electron bridge reports 'open' before createBridge has returned.
    // Watches may be per connection, so the open run is watched again too.
    queueMicrotask(() => {
      loadRuns();
      watch(store.getState().selectedRunId);
    });
  });
  // A run pruned (or deleted) while the page shows it: a view's request for it answers
  // 'not-found'. Asked once more by id, and if the log no longer holds it, the studio's
  // run-missing page says so — not a header of a run that is gone, every tab failing in
  // protocol words (helper 90).
  const bridge: Bridge = {
    on: (channel, cb) => raw.on(channel, cb),
    close: () => raw.close(),
    invoke: (channel, req) =>
      raw.invoke(channel, req).catch((err: unknown) => {
        const runId = (req as { runId?: unknown }).runId;
        if (typeof runId === 'string' && channel !== 'run.get' && toProtocolFailure(err).code === 'not-found') {
          raw.invoke('run.get', { runId }).then(
            () => undefined,
            (again: unknown) => {
              const failure = toProtocolFailure(again);
              if (failure.code === 'not-found') store.getState().noteRunMissing(runId, failure.message);
            },
          );
        }
        throw err;
      }),
  };
  setBridge(bridge);

  // The open run's summary is also re-read (throttled) when its log grows, so the header never
  // depends on a single 'runs.changed' push arriving.
  let refreshTimer: ReturnType<typeof setTimeout> | null = null;
  const refreshSelected = (runId: string) => {
    if (refreshTimer) return;
    refreshTimer = setTimeout(() => {
      refreshTimer = null;
      bridge.invoke('run.get', { runId }).then(
        (run) => upsert(run),
        (err: unknown) => console.warn(`run.get ${runId}: ${describeFailure(err)}`),
      );
    }, 300);
  };
  // A run the page did not know appeared — started, or opened from a link — the count in the status
  // bar and the rail is read again (throttled): the log says whether it was counted already.
  let totalTimer: ReturnType<typeof setTimeout> | null = null;
  const refreshTotal = () => {
    if (totalTimer) return;
    totalTimer = setTimeout(() => {
      totalTimer = null;
      bridge.invoke('runs.list', { limit: 1 }).then(
        ({ total }) => store.getState().setRunsTotal(total),
        (err: unknown) => console.warn(`runs.list: ${describeFailure(err)}`),
      );
    }, 300);
  };
  function upsert(run: RunSummary): void {
    const known = store.getState().runsById[run.runId] !== undefined;
    store.getState().upsertRun(run);
    if (!known) refreshTotal();
  }
  const offs = [
    bridge.on('runs.changed', upsert),
    bridge.on('run.appended', (push) => {
      store.getState().noteAppended(push.runId, push.lastSeq);
      if (push.runId === store.getState().selectedRunId) refreshSelected(push.runId);
    }),
  ];

  readHash(store);
  // A link's seq is checked against the run once its summary arrives (below): past its end, the
  // selection is its last seq, not a seq no view can show.
  let linkSeq = store.getState().selectedRunId === null ? null : store.getState().selectedSeq;
  // The socket may take a moment; the list does not need to wait for it.
  loadRuns();
  // The server pushes 'run.appended' only for watched runs: watch whichever run is open.
  function watch(runId: string | null): void {
    if (!runId) return;
    bridge.invoke('run.watch', { runId }).catch((err: unknown) => console.warn(`run.watch ${runId}: ${describeFailure(err)}`));
    // A run opened from the URL or just started may not be in the list yet.
    bridge.invoke('run.get', { runId }).then(
      (run) => {
        upsert(run);
        if (linkSeq !== null && store.getState().selectedSeq === linkSeq) store.getState().clampSelectedSeq(run.runId, run.lastSeq);
        linkSeq = null;
      },
      (err: unknown) => {
        const failure = toProtocolFailure(err);
        if (failure.code === 'not-found') store.getState().noteRunMissing(runId, failure.message);
        else console.warn(`run.get ${runId}: ${describeFailure(err)}`);
      },
    );
  }
  watch(store.getState().selectedRunId);
  // A hash changed by hand or by a link on the page (writeHash's replaceState fires no event):
  // open what it names, as a first load does — the page kept showing the old run (helper 83).
  const onHashChange = () => {
    readHash(store);
    const state = store.getState();
    linkSeq = state.selectedRunId === null ? null : state.selectedSeq;
  };
  window.addEventListener('hashchange', onHashChange);
  const offHash = store.subscribe((state, prev) => {
    if (state.selectedRunId !== prev.selectedRunId) watch(state.selectedRunId);
    if (state.selectedRunId !== prev.selectedRunId || state.tab !== prev.tab || state.selectedSeq !== prev.selectedSeq || state.eventFilter !== prev.eventFilter) writeHash(state);
  });

  return {
    bridge,
    stop: () => {
      for (const off of offs) off();
      if (refreshTimer) clearTimeout(refreshTimer);
      if (totalTimer) clearTimeout(totalTimer);
      offHash();
      window.removeEventListener('hashchange', onHashChange);
      bridge.close();
    },
  };
}
