/**
 * Selection slice: which run is open, which tab shows, and which seq is selected. Selecting a
 * seq (a timeline bar, a marker, an event row) also moves the scrubber there, so every view
 * agrees on "the current position"; changing run clears both. The Events tab's filter is kept
 * across runs (a type or a step path means the same in a run of the same mission).
 */
import type { StateCreator } from 'zustand';
import type { StudioState } from './studio-store.js';
import type { EventFilter } from '../lib/protocol.js';

export type StudioTab = 'timeline' | 'state' | 'events' | 'replay' | 'crashlab';

export const STUDIO_TABS: { id: StudioTab; label: string }[] = [
  { id: 'timeline', label: 'Timeline' },
  { id: 'state', label: 'State' },
  { id: 'events', label: 'Events' },
  { id: 'replay', label: 'Replay diff' },
  { id: 'crashlab', label: 'Crash lab' },
];

export interface SelectionSlice {
  selectedRunId: string | null;
  selectedSeq: number | null;
  tab: StudioTab;
  eventFilter: EventFilter;
  selectRun: (runId: string | null) => void;
  selectSeq: (seq: number | null) => void;
  /** A selected seq of `runId` past `lastSeq` (a link's #seq beyond the run's end) becomes `lastSeq`. */
  clampSelectedSeq: (runId: string, lastSeq: number) => void;
  setTab: (tab: StudioTab) => void;
  setEventFilter: (filter: EventFilter) => void;
}

export const createSelectionSlice: StateCreator<StudioState, [], [], SelectionSlice> = (set) => ({
  selectedRunId: null,
  selectedSeq: null,
  tab: 'timeline',
  eventFilter: {},
  selectRun: (runId) =>
    set((state) =>
      state.selectedRunId === runId ? {} : { selectedRunId: runId, selectedSeq: null, scrubSeq: null, pinnedSeq: null },
    ),
  selectSeq: (seq) => set(seq === null ? { selectedSeq: null } : { selectedSeq: seq, scrubSeq: seq }),
  clampSelectedSeq: (runId, lastSeq) =>
    set((state) =>
      state.selectedRunId === runId && state.selectedSeq !== null && lastSeq >= 1 && state.selectedSeq > lastSeq
        ? { selectedSeq: lastSeq, scrubSeq: lastSeq }
        : {},
    ),
  setTab: (tab) => set({ tab }),
  setEventFilter: (filter) => set({ eventFilter: withoutEmpty(filter) }),
});

/** The filter with empty parts dropped, so "no filter" has one shape (the URL and the search key agree). */
function withoutEmpty(filter: EventFilter): EventFilter {
  return {
    ...(filter.types && filter.types.length > 0 ? { types: [...filter.types].sort() } : {}),
    ...(filter.step ? { step: filter.step } : {}),
    ...(filter.text ? { text: filter.text } : {}),
  };
}
