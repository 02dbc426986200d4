/**
 * A link to a run names a seq (#run=…&seq=N). A seq past the run's end (a hand-edited link, a
 * link to a run since pruned and imported again shorter) was kept as the selection: the header
 * offered "Fork from seq 99999999", the Events tab said "Loading event #99999999…" for ever and
 * the Timeline marked #99999999, while the scrubber said #37 / 37. Once the run's summary is
 * known the selection is its last seq; a seq inside the run is left alone.
 */
import { describe, expect, it } from 'vitest';
import { createStudioStore } from '../../renderer/src/store/studio-store.js';

describe('a selected seq past the end of the run', () => {
  it('becomes the run\'s last seq once its summary says where that is', () => {
    const store = createStudioStore();
    store.getState().selectRun('r1');
    store.getState().selectSeq(99_999_999);
    store.getState().clampSelectedSeq('r1', 37);
    expect(store.getState().selectedSeq).toBe(37);
    expect(store.getState().scrubSeq).toBe(37);
  });

  it('is left alone inside the run, for another run, and with no selection', () => {
    const store = createStudioStore();
    store.getState().selectRun('r1');
    store.getState().selectSeq(12);
    store.getState().clampSelectedSeq('r1', 37);
    expect(store.getState().selectedSeq).toBe(12);
    store.getState().selectSeq(50);
    store.getState().clampSelectedSeq('other', 37);
    expect(store.getState().selectedSeq).toBe(50);
    store.getState().selectSeq(null);
    store.getState().clampSelectedSeq('r1', 37);
    expect(store.getState().selectedSeq).toBeNull();
  });
});
