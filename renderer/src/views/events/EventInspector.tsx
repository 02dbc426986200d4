/**
 * The event inspector: the run's log — or the events its filter keeps (type, step, text; searched
 * by the engine) — as a virtualised list loaded page by page as it scrolls, and the selected
 * event's payload, with secrets already redacted by the engine, in a JSON viewer. Selection is
 * shared with the timeline and the scrubber; the filter lives in the URL with the selection.
 */
import { useEffect, useState } from 'react';
import { useStudio } from '../../store/studio-store.js';
import { knownLastSeq } from '../../store/runs-slice.js';
import { useEventSearch, type Located } from '../../lib/use-event-search.js';
import { describeFailure } from '../../lib/protocol-failure.js';
import { EventInspectorFilters } from './EventInspectorFilters.js';
import { EventInspectorList } from './EventInspectorList.js';
import { EventInspectorPreview } from './EventInspectorPreview.js';

export function EventInspector({ runId }: { runId: string }) {
  const lastSeq = useStudio((s) => knownLastSeq(s, runId));
  const selectedSeq = useStudio((s) => s.selectedSeq);
  const selectSeq = useStudio((s) => s.selectSeq);
  const filter = useStudio((s) => s.eventFilter);
  const rows = useEventSearch(runId, filter, lastSeq);
  /** The row to bring into view: where the selection sits among the rows (or the next match after it). */
  const [scrollTo, setScrollTo] = useState<{ row: number } | null>(null);
  const [note, setNote] = useState<string | null>(null);

  // A selection made elsewhere (the timeline, a deep link) or a new filter: find its row.
  useEffect(() => {
    if (selectedSeq === null) return;
    let live = true;
    rows.locate(selectedSeq).then(
      (found) => live && found !== null && setScrollTo({ row: found.row }),
      () => undefined,
    );
    return () => {
      live = false;
    };
  }, [selectedSeq, rows.locate]); // eslint-disable-line react-hooks/exhaustive-deps

  const jump = async (seq: number) => {
    if (seq > lastSeq) {
      setNote(`This run has ${lastSeq} events: there is no #${seq}.`);
      return;
    }
    let found: Located | null;
    try {
      found = await rows.locate(seq);
    } catch (err) {
      setNote(describeFailure(err));
      return;
    }
    if (found === null) {
      setNote(`No event at or after #${seq} passes the filter.`);
      return;
    }
    const at = found.event.seq;
    setNote(at === seq ? null : `#${seq} is not among the filtered events: showing #${at}, the next one that is.`);
    selectSeq(at);
    setScrollTo({ row: found.row });
  };

  return (
    <div className="event-inspector">
      <div className="event-inspector-main">
        <EventInspectorFilters filter={filter} types={rows.types} total={rows.total} lastSeq={rows.scannedSeq} onJump={(seq) => void jump(seq)} note={note} />
        <EventInspectorList rows={rows} selectedSeq={selectedSeq} onSelect={selectSeq} scrollTo={scrollTo} />
      </div>
      <EventInspectorPreview runId={runId} loaded={selectedSeq !== null ? rows.get(rows.rowOf(selectedSeq) ?? -1) : undefined} seq={selectedSeq} />
    </div>
  );
}
