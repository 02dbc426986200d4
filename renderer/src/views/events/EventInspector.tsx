/**
 * The event inspector: the run's log as a virtualised list (loaded page by page as it scrolls)
 * and the selected event's payload — requests and responses with secrets already redacted by
 * the engine — in a JSON viewer. Selection is shared with the timeline and the scrubber.
 */
import { useEffect } from 'react';
import { useStudio } from '../../store/studio-store.js';
import { knownLastSeq } from '../../store/runs-slice.js';
import { useEventPages } from '../../lib/use-event-pages.js';
import { EventInspectorList } from './EventInspectorList.js';
import { EventInspectorPreview } from './EventInspectorPreview.js';

export function EventInspector({ runId }: { runId: string }) {
  const lastSeq = useStudio((s) => knownLastSeq(s, runId));
  const selectedSeq = useStudio((s) => s.selectedSeq);
  const selectSeq = useStudio((s) => s.selectSeq);
  const pages = useEventPages(runId, lastSeq);
  const selected = selectedSeq !== null ? pages.get(selectedSeq) : undefined;

  useEffect(() => {
    if (selectedSeq !== null) pages.ensure(selectedSeq, selectedSeq);
  }, [selectedSeq, pages.ensure]); // eslint-disable-line react-hooks/exhaustive-deps

  return (
    <div className="event-inspector">
      <EventInspectorList lastSeq={lastSeq} pages={pages} selectedSeq={selectedSeq} onSelect={selectSeq} />
      <EventInspectorPreview event={selected ?? null} seq={selectedSeq} />
    </div>
  );
}
