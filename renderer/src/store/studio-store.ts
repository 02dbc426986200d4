/**
 * The studio's one zustand store, built from four slices (runs, selection, scrub, connection).
 * Components select single fields (`useStudio((s) => s.selectedRunId)`) so a push that changes
 * one run does not re-render views that only care about the selection.
 */
import { create } from 'zustand';
import { createConnectionSlice, type ConnectionSlice } from './connection-slice.js';
import { createRunsSlice, type RunsSlice } from './runs-slice.js';
import { createScrubSlice, type ScrubSlice } from './scrub-slice.js';
import { createSelectionSlice, type SelectionSlice } from './selection-slice.js';

export type StudioState = RunsSlice & SelectionSlice & ScrubSlice & ConnectionSlice;

export function createStudioStore() {
  return create<StudioState>()((...a) => ({
    ...createRunsSlice(...a),
    ...createSelectionSlice(...a),
    ...createScrubSlice(...a),
    ...createConnectionSlice(...a),
  }));
}

export const useStudio = createStudioStore();
