/**
 * The bottom bar: live-push connection state (with the reconnect countdown), "Open bundle…" and
 * the run count; when the server refuses the page's session, a banner that says so and what to do.
 * (The bundle button lives here, in the frame, so it never floats over a view's content.)
 */
import { useStudio } from '../store/studio-store.js';
import { ImportBundle } from './ImportBundle.js';
import { formatDuration } from '../lib/time-format.js';

export function StatusBar() {
  const connection = useStudio((s) => s.connection);
  const runCount = useStudio((s) => s.runsTotal ?? Object.keys(s.runsById).length);
  let text: string;
  switch (connection.state) {
    case 'open':
      text = connection.transport === 'electron' ? 'connected (desktop)' : 'live';
      break;
    case 'connecting':
      text = connection.attempt === 0 ? 'connecting…' : `reconnecting (attempt ${connection.attempt + 1})…`;
      break;
    case 'closed':
      text = connection.refused
        ? `not connected: the studio refused this page (${connection.refused})`
        : `disconnected — retrying in ${formatDuration(connection.retryInMs)} (${connection.reason})`;
      break;
  }
  return (
    <>
      {connection.state === 'closed' && connection.refused && (
        <div className="connection-refused" role="alert">
          The studio refused this page: {connection.refused}. Nothing here is live until you open the studio's URL again.
        </div>
      )}
    <footer className="status-bar" role="status" aria-label="Connection">
      <span className={`status-dot conn-${connection.state}`} aria-hidden="true" />
      <span data-testid="connection-state" data-state={connection.state}>
        {text}
      </span>
      <span className="status-bar-spacer" />
      <ImportBundle />
      <span className="num">{runCount} runs</span>
    </footer>
    </>
  );
}
