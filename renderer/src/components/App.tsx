/**
 * The studio's frame: runs sidebar on the left; on the right the open run's header, its wait
 * banner, the tab strip and the active view; a status bar at the bottom. Views mount only while
 * their tab is active, so a hidden view never listens to pushes.
 */
import { useStudio } from '../store/studio-store.js';
import { RunsSidebar } from './RunsSidebar.js';
import { RunHeader } from './RunHeader.js';
import { RunTabs } from './RunTabs.js';
import { StatusBar } from './StatusBar.js';
import { DemoHint } from './DemoHint.js';
import { Timeline } from '../views/timeline/Timeline.js';
import { Scrubber } from '../views/state/Scrubber.js';
import { EventInspector } from '../views/events/EventInspector.js';
import { ReplayDiff } from '../views/replay/ReplayDiff.js';
import { CrashLab } from '../views/crashlab/CrashLab.js';
import type { StudioTab } from '../store/selection-slice.js';

/** The view for a tab; keyed by run and tab so switching either starts it fresh. */
function renderView(tab: StudioTab, runId: string) {
  switch (tab) {
    case 'timeline':
      return <Timeline runId={runId} />;
    case 'state':
      return <Scrubber runId={runId} />;
    case 'events':
      return <EventInspector runId={runId} />;
    case 'replay':
      return <ReplayDiff runId={runId} />;
    case 'crashlab':
      return <CrashLab runId={runId} />;
  }
}

export function App() {
  const runId = useStudio((s) => s.selectedRunId);
  const tab = useStudio((s) => s.tab);
  const missing = useStudio((s) => (runId === null ? undefined : s.missingRuns[runId]));
  return (
    <div className="app">
      <RunsSidebar />
      <main className="app-main" aria-label="Run details">
        {runId && missing !== undefined ? (
          <div className="app-empty" role="alert" data-testid="run-missing">
            <h1>{runId}</h1>
            <p title={missing}>No run with this id in this database: the link may name a run since pruned, or one in another database. Pick a run on the left.</p>
          </div>
        ) : runId ? (
          <>
            {/* Keyed: an edit, a status message or a payload typed for one run must not carry over to the next (helper 83: "Fork from seq N" forked run B with run A's edited mission). */}
            <RunHeader key={runId} runId={runId} />
            <DemoHint runId={runId} />
            <RunTabs />
            <section className="app-view" role="tabpanel" aria-label={tab}>
              <div className="app-view-body" key={`${runId}:${tab}`}>
                {renderView(tab, runId)}
              </div>
            </section>
          </>
        ) : (
          <div className="app-empty">
            <h1>Reqon Studio</h1>
            <p>Pick a run on the left, or start one from a mission file with “New run”, or open a run bundle.</p>
          </div>
        )}
      </main>
      <StatusBar />
    </div>
  );
}
