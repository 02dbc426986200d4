/**
 * Scrub slice: the scrubber's position over a run's seqs and the pinned position of
 * "compare with…". Positions are clamped to [1, lastSeq]; null means "follow the end", so a
 * live run's scrubber tracks new events until the user moves it.
 */
import type { StateCreator } from 'zustand';
import type { StudioState } from './studio-store.js';

export interface ScrubSlice {
  scrubSeq: number | null;
  pinnedSeq: number | null;
  setScrub: (seq: number | null) => void;
  /** Moves by `delta` within [1, lastSeq], starting from the end when following. */
  stepScrub: (delta: number, lastSeq: number) => void;
  pin: (seq: number | null) => void;
}

export function clampSeq(seq: number, lastSeq: number): number {
  if (lastSeq < 1) return 0;
  return Math.min(lastSeq, Math.max(1, Math.round(seq)));
}

export const createScrubSlice: StateCreator<StudioState, [], [], ScrubSlice> = (set) => ({
  scrubSeq: null,
  pinnedSeq: null,
  setScrub: (scrubSeq) => set({ scrubSeq, selectedSeq: scrubSeq }),
  stepScrub: (delta, lastSeq) =>
    set((state) => {
      const from = state.scrubSeq ?? lastSeq;
      const next = clampSeq(from + delta, lastSeq);
      return { scrubSeq: next, selectedSeq: next };
    }),
  pin: (pinnedSeq) => set({ pinnedSeq }),
});
