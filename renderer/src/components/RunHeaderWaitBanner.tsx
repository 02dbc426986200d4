/**
 * For a run that is not moving: what it waits on, since when, until when (a live countdown), and
 * a form to resume it with a JSON payload (run.resume). A malformed payload is refused here with
 * the parser's message rather than sent. An imported run (read-only) waits on nothing here: its
 * banner says where its log ends and that nothing continues it — no countdown, no Resume that
 * could only fail (helper 83).
 */
import { useState } from 'react';
import type { RunSummary } from '../lib/protocol.js';
import { invoke } from '../lib/bridge.js';
import { describeFailure } from '../lib/protocol-failure.js';
import { formatDateTime, formatDuration } from '../lib/time-format.js';
import { useNow } from '../lib/use-request.js';

export function RunHeaderWaitBanner({ run }: { run: RunSummary }) {
  const now = useNow(1000);
  const [payload, setPayload] = useState('');
  const [message, setMessage] = useState<{ kind: 'ok' | 'error'; text: string } | null>(null);
  const [busy, setBusy] = useState(false);

  const resume = async () => {
    let parsed: unknown = undefined;
    if (payload.trim()) {
      try {
        parsed = JSON.parse(payload);
      } catch (err) {
        setMessage({ kind: 'error', text: `The payload is not JSON: ${(err as Error).message}` });
        return;
      }
    }
    setBusy(true);
    setMessage(null);
    try {
      const res = await invoke('run.resume', { runId: run.runId, ...(parsed !== undefined ? { payload: parsed } : {}) });
      // Exit 12: resumed, then the log failed under it — interrupted, resumable, not a success.
      setMessage(res.outcome === 'interrupted' ? { kind: 'error', text: 'Resumed, then interrupted: the log failed under the run, which stays resumable — resume it again once the log is back' } : { kind: 'ok', text: `Resumed: ${res.outcome}` });
    } catch (err) {
      setMessage({ kind: 'error', text: describeFailure(err) });
    } finally {
      setBusy(false);
    }
  };

  const waitingOn = run.waitingOn ?? 'an external event';
  return (
    <div className="banner banner-wait" role="region" aria-label="Wait banner">
      <div className="banner-wait-text">
        <span className="wait-icon" aria-hidden="true">‖</span>
        <span>
          Waiting on <strong data-testid="waiting-on">{waitingOn}</strong>
          {run.waitingSince !== null && (
            <>
              {' '}since <strong>{formatDateTime(run.waitingSince)}</strong> ({formatDuration(now - run.waitingSince)})
            </>
          )}
          {run.imported ? (
            <>
              {run.wakeAt !== null && (
                <>
                  {' '}until <strong>{formatDateTime(run.wakeAt)}</strong>
                </>
              )}{' '}
              — <span data-testid="imported-wait">imported from a bundle: read-only, nothing continues it here; “Fork from here” above starts a new run from its log</span>
            </>
          ) : run.wakeAt !== null ? (
            <>
              {' '}until <strong>{formatDateTime(run.wakeAt)}</strong> —{' '}
              <span className="countdown" data-testid="countdown">
                {run.wakeAt > now ? `wakes in ${formatDuration(run.wakeAt - now)}` : 'due now'}
              </span>
            </>
          ) : (
            <> — no deadline: it waits until resumed</>
          )}
        </span>
      </div>
      {!run.imported && (
        <div className="banner-wait-resume">
          <input
            aria-label="Resume payload"
            placeholder='payload JSON, e.g. {"approved": true}'
            value={payload}
            spellCheck={false}
            onChange={(e) => setPayload(e.target.value)}
          />
          <button className="primary" aria-label="Resume run" disabled={busy} onClick={() => void resume()}>
            Resume
          </button>
        </div>
      )}
      {message && (
        <div className={message.kind === 'ok' ? 'ok-text' : 'error-text'} role={message.kind === 'error' ? 'alert' : 'status'}>
          {message.text}
        </div>
      )}
    </div>
  );
}
