/**
 * The selected event: its header fields and its payload in a JSON viewer. HTTP events get the
 * request or response shown first, since that is what one opens them for.
 */
import type { StoredEvent } from '../../lib/protocol.js';
import { formatDateTime } from '../../lib/time-format.js';
import { JsonBlock } from '../../components/JsonBlock.js';

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
      return { label: 'Value', value: p.value };
    default:
      return null;
  }
}

export function EventInspectorPreview({ event, seq }: { event: StoredEvent | null; seq: number | null }) {
  if (seq === null) return <section className="panel event-preview muted" aria-label="Event preview">Select an event to see its payload.</section>;
  if (!event) return <section className="panel event-preview muted" aria-label="Event preview">Loading event #{seq}…</section>;
  const head = headline(event);
  return (
    <section className="panel event-preview" aria-label="Event preview">
      <h3>
        <span className="seq-chip">#{event.seq}</span>
        <code className={`event-type type-${event.type.split('.')[0]}`}>{event.type}</code>
      </h3>
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
