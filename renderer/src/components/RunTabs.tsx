/**
 * The tab strip over the open run (Timeline / State / Events / Replay diff / Crash lab),
 * keyboard-navigable as an ARIA tablist.
 */
import { useStudio } from '../store/studio-store.js';
import { STUDIO_TABS } from '../store/selection-slice.js';

export function RunTabs() {
  const tab = useStudio((s) => s.tab);
  const setTab = useStudio((s) => s.setTab);
  return (
    <nav className="run-tabs" role="tablist" aria-label="Run views">
      {STUDIO_TABS.map((t, i) => (
        <button
          key={t.id}
          role="tab"
          aria-selected={tab === t.id}
          className={tab === t.id ? 'active' : ''}
          onClick={() => setTab(t.id)}
          onKeyDown={(e) => {
            const d = e.key === 'ArrowRight' ? 1 : e.key === 'ArrowLeft' ? -1 : 0;
            if (d !== 0) setTab(STUDIO_TABS[(i + d + STUDIO_TABS.length) % STUDIO_TABS.length]!.id);
          }}
        >
          {t.label}
        </button>
      ))}
    </nav>
  );
}
