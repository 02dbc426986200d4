/**
 * The Events tab's filter bar: which types (a checklist with each type's count in the run), a
 * step path (a prefix; `*` for any iteration), text in the type, step or payload, and a seq to
 * jump to. Text fields apply after a short pause in typing, so a 100k-event run is searched once
 * per word, not per key.
 */
import { useEffect, useRef, useState } from 'react';
import type { EventFilter, EventSearchPage } from '../../lib/protocol.js';
import { useStudio } from '../../store/studio-store.js';

const TYPING_PAUSE_MS = 250;

interface Props {
  filter: EventFilter;
  types: EventSearchPage['types'];
  total: number;
  lastSeq: number;
  onJump: (seq: number) => void;
  note: string | null;
}

/** A text field that reports its value once typing pauses (or at once on Enter), and follows outside changes. */
function useSettledText(value: string, apply: (text: string) => void) {
  const [draft, setDraft] = useState(value);
  const timer = useRef<ReturnType<typeof setTimeout> | null>(null);
  useEffect(() => setDraft(value), [value]);
  useEffect(() => () => void (timer.current && clearTimeout(timer.current)), []);
  const change = (text: string) => {
    setDraft(text);
    if (timer.current) clearTimeout(timer.current);
    timer.current = setTimeout(() => apply(text), TYPING_PAUSE_MS);
  };
  const flush = () => {
    if (timer.current) clearTimeout(timer.current);
    apply(draft);
  };
  return { draft, change, flush };
}

export function EventInspectorFilters({ filter, types, total, lastSeq, onJump, note }: Props) {
  const setFilter = useStudio((s) => s.setEventFilter);
  const filterRef = useRef(filter);
  filterRef.current = filter;
  const text = useSettledText(filter.text ?? '', (t) => setFilter({ ...filterRef.current, text: t }));
  const step = useSettledText(filter.step ?? '', (s) => setFilter({ ...filterRef.current, step: s }));
  const [jumpTo, setJumpTo] = useState('');
  const chosen = new Set(filter.types ?? []);
  const filtered = chosen.size > 0 || !!filter.step || !!filter.text;

  const toggle = (type: string) => {
    const next = new Set(chosen);
    if (next.has(type)) next.delete(type);
    else next.add(type);
    setFilter({ ...filter, types: [...next] });
  };

  return (
    <div className="event-filters" role="search" aria-label="Event filters">
      <details className="event-filters-types">
        <summary aria-label="Event types">{chosen.size === 0 ? 'All types' : chosen.size === 1 ? [...chosen][0] : `${chosen.size} types`}</summary>
        <div className="event-filters-types-menu" role="group" aria-label="Event types to show">
          {types.map((t) => (
            <label key={t.type}>
              <input type="checkbox" checked={chosen.has(t.type)} onChange={() => toggle(t.type)} />
              <code className={`event-type type-${t.type.split('.')[0]}`}>{t.type}</code>
              <span className="num">{t.count}</span>
            </label>
          ))}
          {/* A type chosen in another run, absent from this one, stays listed so it can be cleared. */}
          {[...chosen]
            .filter((c) => !types.some((t) => t.type === c))
            .map((c) => (
              <label key={c}>
                <input type="checkbox" checked onChange={() => toggle(c)} />
                <code className="event-type">{c}</code>
                <span className="num">0</span>
              </label>
            ))}
        </div>
      </details>
      <input
        className="event-filters-step"
        aria-label="Step path"
        placeholder="step (Sync/1[*]/0)"
        title="A step path: the step and everything inside it; * stands for any text within one segment, e.g. every iteration: Sync/1[*]/0"
        value={step.draft}
        onChange={(e) => step.change(e.target.value)}
        onKeyDown={(e) => e.key === 'Enter' && step.flush()}
      />
      <input
        className="event-filters-text"
        type="search"
        aria-label="Search events"
        placeholder="search type, step, payload…"
        value={text.draft}
        onChange={(e) => text.change(e.target.value)}
        onKeyDown={(e) => e.key === 'Enter' && text.flush()}
      />
      <form
        className="event-filters-jump"
        onSubmit={(e) => {
          e.preventDefault();
          const seq = Number(jumpTo);
          if (Number.isSafeInteger(seq) && seq >= 1) onJump(seq);
        }}
      >
        <input aria-label="Jump to seq" type="number" min={1} placeholder="seq" value={jumpTo} onChange={(e) => setJumpTo(e.target.value)} />
        <button type="submit" disabled={jumpTo === ''}>Go</button>
      </form>
      {/* lastSeq is 0 until the engine answered this filter's first page: no count is known yet. */}
      <span className="event-filters-count" aria-label="Matching events" aria-busy={lastSeq === 0}>
        {lastSeq === 0 ? (filtered ? 'searching…' : 'loading…') : filtered ? `${total} of ${lastSeq}` : `${lastSeq} events`}
      </span>
      {filtered && (
        <button className="link" onClick={() => setFilter({})}>
          clear
        </button>
      )}
      {note && (
        <div className="event-filters-note muted" role="status">
          {note}
        </div>
      )}
    </div>
  );
}
