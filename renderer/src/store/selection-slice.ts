/**
 * Selection slice: which run is open, which tab shows, and which seq is selected. Selecting a
 * seq (a timeline bar, a marker, an event row) also moves the scrubber there, so every view
 * agrees on "the current position"; changing run clears both.
 */
import type { StateCreator } from 'zustand';
import type { StudioState } from './studio-store.js';

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
  selectRun: (runId: string | null) => void;
  selectSeq: (seq: number | null) => void;
  setTab: (tab: StudioTab) => void;
}

export const createSelectionSlice: StateCreator<StudioState, [], [], SelectionSlice> = (set) => ({
  selectedRunId: null,
  selectedSeq: null,
  tab: 'timeline',
  selectRun: (runId) =>
    set((state) =>
      state.selectedRunId === runId ? {} : { selectedRunId: runId, selectedSeq: null, scrubSeq: null, pinnedSeq: null },
    ),
  selectSeq: (seq) => set(seq === null ? { selectedSeq: null } : { selectedSeq: seq, scrubSeq: seq }),
  setTab: (tab) => set({ tab }),
});
