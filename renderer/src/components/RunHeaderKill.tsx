/**
 * For a running run: kill its process now (run.crash, SIGKILL) — the interactive crash. The run
 * stays in the log as it was; resuming it replays the prefix and carries on.
 */
import { useState } from 'react';
import { invoke } from '../lib/bridge.js';
import { describeFailure } from '../lib/protocol-failure.js';

export function RunHeaderKill({ runId }: { runId: string }) {
  const [message, setMessage] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const kill = async () => {
    setBusy(true);
    setMessage(null);
    try {
      await invoke('run.crash', { runId });
      setMessage('SIGKILL sent');
    } catch (err) {
      setMessage(describeFailure(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <span className="run-header-kill">
      <button className="danger-outline" aria-label="Kill run process" disabled={busy} onClick={() => void kill()} title="Kill the run's process with SIGKILL">
        ✕ Kill process
      </button>
      {message && <span className="muted" role="status">{message}</span>}
    </span>
  );
}
