/**
 * The first screen of `reqon studio --demo` (npm start): what the demo run being watched does, and
 * three things to try next. Shown while the studio runs the demo (studio.info names its API) and
 * the open run is the demo mission's; dismissed for the session with ✕.
 */
import { useEffect, useState } from 'react';
import { invoke } from '../lib/bridge.js';
import { useStudio } from '../store/studio-store.js';

const DEMO_MISSION = 'DemoOrders';

export function DemoHint({ runId }: { runId: string }) {
  const mission = useStudio((s) => s.runsById[runId]?.mission);
  const setTab = useStudio((s) => s.setTab);
  const [demo, setDemo] = useState(false);
  const [dismissed, setDismissed] = useState(false);
  useEffect(() => {
    let live = true;
    invoke('studio.info', {})
      .then((info) => live && setDemo(info.demoApiUrl !== null))
      .catch(() => undefined);
    return () => {
      live = false;
    };
  }, []);
  if (!demo || dismissed || mission !== DEMO_MISSION) return null;
  return (
    <aside className="banner demo-hint" aria-label="Try this">
      <span>
        <strong>The demo:</strong> this run is killed by SIGKILL right after its third confirmation is sent, then restarted: the log's prefix is
        replayed and it carries on live — watch the crash and resume markers on the Timeline.
      </span>
      <span>
        <strong>Try this:</strong>{' '}
        <button className="link" onClick={() => setTab('crashlab')}>Crash lab</button> kills it anywhere and judges the restart ·{' '}
        <button className="link" onClick={() => setTab('state')}>State</button> scrubs through every step ·{' '}
        <button className="link" onClick={() => setTab('replay')}>Replay diff</button> sets the original against its replay.
      </span>
      <button className="link" aria-label="Dismiss" onClick={() => setDismissed(true)}>✕</button>
    </aside>
  );
}
