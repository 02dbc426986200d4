/**
 * For a running run: kill its process now (run.crash, SIGKILL) — the interactive crash. The run
 * stays in the log as it was; the studio's worker takes a run whose owner died over (replaying
 * the prefix, carrying on live). A run left orphaned — no live owner, no worker yet — gets a
 * Resume button that does the same by hand.
 */
import { useState } from 'react';
import { invoke } from '../lib/bridge.js';
import { describeFailure } from '../lib/protocol-failure.js';

export function RunHeaderKill({ runId, orphaned }: { runId: string; orphaned: boolean }) {
  const [message, setMessage] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const act = async (what: () => Promise<string>) => {
    setBusy(true);
    setMessage(null);
    try {
      setMessage(await what());
    } catch (err) {
      setMessage(describeFailure(err));
    } finally {
      setBusy(false);
    }
  };
  const kill = () => act(async () => (await invoke('run.crash', { runId })).note ?? 'SIGKILL sent');
  const resume = () => act(async () => `Resumed: ${(await invoke('run.resume', { runId })).outcome}`);
  return (
    <span className="run-header-kill">
      {orphaned ? (
        <>
          <span className="muted" data-testid="orphaned">no live process owns this run</span>
          <button className="primary" aria-label="Resume crashed run" disabled={busy} onClick={() => void resume()} title="Take the run over: replay its log, then carry on live">
            ▶ Resume
          </button>
        </>
      ) : (
        <button className="danger-outline" aria-label="Kill run process" disabled={busy} onClick={() => void kill()} title="Kill the run's process with SIGKILL">
          ✕ Kill process
        </button>
      )}
      {message && <span className="muted" role="status">{message}</span>}
    </span>
  );
}
