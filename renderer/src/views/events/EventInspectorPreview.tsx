/**
 * The selected event: its header fields and its payload in a JSON viewer. HTTP events get the
 * request or response shown first, since that is what one opens them for. From here: the State
 * at this event, and the list narrowed to this step (or to the same step in every iteration).
 * The selection may be an event the filter hides (a deep link, the timeline): it is read alone.
 */
import type { StoredEvent } from '../../lib/protocol.js';
import { formatDateTime } from '../../lib/time-format.js';
import { useRequest } from '../../lib/use-request.js';
import { useStudio } from '../../store/studio-store.js';
import { JsonBlock } from '../../components/JsonBlock.js';
import { everyIteration } from '../../lib/event-line.js';
import { visibleControls } from '../../lib/visible-text.js';

function headline(event: StoredEvent): { label: string; value: unknown } | null {
  const p = event.payload as Record<string, unknown>;
  switch (event.type) {
    case 'http.request':
      return { label: 'Request', value: p.request };
    case 'http.response':
      return { label: 'Response', value: p.response };
    case 'http.error':
    case 'run.failed':
    case 'step.failed':
    case 'action.failed':
    case 'stage.failed':
      return { label: 'Error', value: p.error };
    case 'store.write':
      return { label: 'Record', value: p.record };
    case 'fetch.completed':
      // With `valueInAnswer` the value is the body of the answer's `http.response`, shown there.
      return 'value' in p ? { label: 'Value', value: p.value } : null;
    default:
      return null;
  }
}

interface Props {
  runId: string;
  /** The selected event, when the list has it loaded. */
  loaded: StoredEvent | undefined;
  seq: number | null;
}

export function EventInspectorPreview({ runId, loaded: listed, seq }: Props) {
  // A list page leaves the large values of a large payload out (event-search.ts listedEvent): the preview shows it whole.
  const loaded = listed && !(listed as { elided?: true }).elided ? listed : undefined;
  const alone = useRequest('run.events', seq !== null && loaded === undefined ? { runId, fromSeq: seq, limit: 1 } : null);
  const event = loaded ?? (alone.data?.[0]?.seq === seq ? alone.data[0] : undefined);
  const setTab = useStudio((s) => s.setTab);
  const setScrub = useStudio((s) => s.setScrub);
  const filter = useStudio((s) => s.eventFilter);
  const setFilter = useStudio((s) => s.setEventFilter);
  if (seq === null) return <section className="panel event-preview muted" aria-label="Event preview">Select an event to see its payload.</section>;
  if (alone.error) return <section className="panel event-preview error-text" aria-label="Event preview">Event #{seq}: {visibleControls(alone.error.message)}</section>;
  if (!event) return <section className="panel event-preview muted" aria-label="Event preview">Loading event #{seq}…</section>;
  const head = headline(event);
  const wild = everyIteration(event.stepPath);
  return (
    <section className="panel event-preview" aria-label="Event preview">
      <h3>
        <span className="seq-chip">#{event.seq}</span>
        <code className={`event-type type-${event.type.split('.')[0]}`}>{event.type}</code>
      </h3>
      <div className="event-preview-actions">
        <button
          onClick={() => {
            setScrub(event.seq);
            setTab('state');
          }}
          title={`The stores, variables and response as they were right after event #${event.seq}`}
        >
          State at this event →
        </button>
        {event.stepPath && (
          <button className="ghost" onClick={() => setFilter({ ...filter, step: event.stepPath })} title={`Only the events of ${event.stepPath} and the steps inside it`}>
            Only this step
          </button>
        )}
        {wild && (
          <button className="ghost" onClick={() => setFilter({ ...filter, step: wild })} title={`This step in every iteration: ${wild}`}>
            This step, every iteration
          </button>
        )}
      </div>
      <dl className="kv">
        <dt>step</dt>
        <dd><code>{event.stepPath || '(run)'}</code></dd>
        <dt>recorded</dt>
        <dd>{formatDateTime(event.recordedAt)} <span className="muted">({event.recordedAt})</span></dd>
      </dl>
      {head && (
        <>
          <h4>{head.label}</h4>
          <JsonBlock value={head.value} label={`${head.label} JSON`} expandAll />
        </>
      )}
      <h4>Payload</h4>
      <JsonBlock value={event.payload} label="Payload JSON" maxHeight={560} />
    </section>
  );
}
