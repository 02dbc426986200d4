/**
 * Every store's records at the scrubbed position: one tab per store, a virtualised key/record
 * table, and the clicked record in full in a JSON viewer. A store with more records than the
 * engine sends at once comes as a window (its slice says which); the pager asks for others.
 */
import { useRef, useState } from 'react';
import { useVirtualizer } from '@tanstack/react-virtual';
import type { StoreSnapshot, ValueSlice } from '../../lib/protocol.js';
import { JsonBlock } from '../../components/JsonBlock.js';
import { jsonText, visibleControls } from '../../lib/visible-text.js';

const ROW = 24;

function preview(value: unknown): string {
  const s = jsonText(value);
  return s === undefined ? 'undefined' : s.length > 160 ? `${s.slice(0, 157)}…` : s;
}

/**
 * The cuts inside record `index` of a store (the engine names them `$[index].record…`, inside the
 * store's list), re-rooted at the record for its JsonBlock, and its pager mapped back.
 */
function recordSlices(all: ValueSlice[], index: number, onWindow: (path: string, from: number) => void) {
  const prefix = `$[${index}].record`;
  const slices = all.filter((s) => s.path.startsWith(prefix)).map((s) => ({ ...s, path: `$${s.path.slice(prefix.length)}` }));
  return { slices, onWindow: (path: string, from: number) => onWindow(`${prefix}${path.slice(1)}`, from) };
}

interface Props {
  stores: StoreSnapshot[];
  slices: (where: string) => ValueSlice[];
  onWindow: (where: string) => (path: string, from: number) => void;
}

export function ScrubberStores({ stores, slices, onWindow }: Props) {
  const [chosen, setChosen] = useState<string | null>(null);
  const [openKey, setOpenKey] = useState<string | null>(null);
  const store = stores.find((s) => s.name === chosen) ?? stores[0] ?? null;
  const scrollRef = useRef<HTMLDivElement>(null);
  const records = store?.records ?? [];
  const virtualizer = useVirtualizer({ count: records.length, getScrollElement: () => scrollRef.current, estimateSize: () => ROW, overscan: 10 });
  const open = records.find((r) => r.key === openKey);
  const windowOf = (name: string) => slices(`store:${name}`).find((s) => s.path === '$') ?? null;
  const window = store ? windowOf(store.name) : null;
  const total = (s: StoreSnapshot) => windowOf(s.name)?.total ?? s.records.length;
  const go = (from: number) => {
    if (store && window) onWindow(`store:${store.name}`)('$', Math.max(0, Math.min(from, window.total - window.count)));
  };

  return (
    <section className="panel" aria-label="Stores">
      <h3>
        Stores
        <span className="store-tabs" role="tablist" aria-label="Store tabs">
          {stores.map((s) => (
            <button key={s.name} role="tab" aria-selected={s === store} className={s === store ? 'active' : ''} onClick={() => setChosen(s.name)}>
              {s.name} <span className="count">{total(s)}</span>
              <span className="muted"> {s.kind}</span>
            </button>
          ))}
        </span>
      </h3>
      {!store ? (
        <div className="muted">No stores declared.</div>
      ) : records.length === 0 ? (
        <div className="muted">“{store.name}” is empty at this position.</div>
      ) : (
        <div className="records" ref={scrollRef} role="table" aria-label={`Records of ${store.name}`}>
          <div className="records-head" role="row">
            <span role="columnheader">key</span>
            <span role="columnheader">record</span>
          </div>
          <div style={{ height: virtualizer.getTotalSize(), position: 'relative' }}>
            {virtualizer.getVirtualItems().map((item) => {
              const r = records[item.index]!;
              return (
                <div
                  key={r.key}
                  role="row"
                  className={`records-row${r.key === openKey ? ' selected' : ''}`}
                  style={{ transform: `translateY(${item.start}px)`, height: ROW }}
                  onClick={() => setOpenKey(r.key === openKey ? null : r.key)}
                >
                  <span role="cell" className="record-key">{visibleControls(r.key)}</span>
                  <span role="cell" className="record-preview">{preview(r.record)}</span>
                </div>
              );
            })}
          </div>
        </div>
      )}
      {store && window && (
        <div className="records-window" role="group" aria-label={`Pages of ${store.name}`}>
          <span className="muted">
            records {window.from.toLocaleString('en-US')}–{(window.from + window.count - 1).toLocaleString('en-US')} of {window.total.toLocaleString('en-US')}
          </span>
          <button aria-label="Previous records" disabled={window.from === 0} onClick={() => go(window.from - window.count)}>◀</button>
          <button aria-label="Next records" disabled={window.from + window.count >= window.total} onClick={() => go(window.from + window.count)}>▶</button>
        </div>
      )}
      {open && store && (
        <JsonBlock
          value={open.record}
          label={`Record ${visibleControls(open.key)}`}
          expandAll
          {...recordSlices(slices(`store:${store.name}`), (window?.from ?? 0) + records.indexOf(open), onWindow(`store:${store.name}`))}
        />
      )}
    </section>
  );
}
