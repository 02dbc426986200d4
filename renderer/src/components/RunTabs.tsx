/**
 * The tab strip over the open run (Timeline / State / Events / Replay diff / Crash lab),
 * keyboard-navigable as an ARIA tablist: ←/→ select the neighbour tab and move focus to it (the
 * selected tab alone is in the Tab order), so repeated presses walk the strip.
 */
import { useRef } from 'react';
import { useStudio } from '../store/studio-store.js';
import { STUDIO_TABS } from '../store/selection-slice.js';

export function RunTabs() {
  const tab = useStudio((s) => s.tab);
  const setTab = useStudio((s) => s.setTab);
  const buttons = useRef<(HTMLButtonElement | null)[]>([]);
  return (
    <nav className="run-tabs" role="tablist" aria-label="Run views">
      {STUDIO_TABS.map((t, i) => (
        <button
          key={t.id}
          ref={(el) => {
            buttons.current[i] = el;
          }}
          role="tab"
          aria-selected={tab === t.id}
          tabIndex={tab === t.id ? 0 : -1}
          className={tab === t.id ? 'active' : ''}
          onClick={() => setTab(t.id)}
          onKeyDown={(e) => {
            const d = e.key === 'ArrowRight' ? 1 : e.key === 'ArrowLeft' ? -1 : 0;
            if (d === 0) return;
            e.preventDefault();
            const next = (i + d + STUDIO_TABS.length) % STUDIO_TABS.length;
            setTab(STUDIO_TABS[next]!.id);
            // Focus followed the selection nowhere: a second press acted on the old tab again (helper 83).
            buttons.current[next]?.focus();
          }}
        >
          {t.label}
        </button>
      ))}
    </nav>
  );
}
