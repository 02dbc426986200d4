/**
 * The processes the lab started, in order: how each one ended (SIGKILL from the armed crash
 * point, or a clean exit), and a bar over the run's log showing which part each process wrote —
 * everything before a resumed process's first new event was replayed from the log, not redone.
 */
import type { CrashLabStatus } from '../../lib/protocol.js';
import type { ExitNotice } from '../../lib/use-crash-lab.js';

interface Props {
  status: CrashLabStatus;
  exits: ExitNotice[];
  onOpenRun: (runId: string) => void;
}

function ending(signal: string | null, code: number | null): { text: string; cls: string } {
  if (signal) return { text: `killed by ${signal}`, cls: 'exit-killed' };
  if (code === null) return { text: 'running…', cls: 'exit-running' };
  if (code === 0) return { text: 'exited 0 (completed)', cls: 'exit-ok' };
  if (code === 10) return { text: 'exited 10 (suspended)', cls: 'exit-ok' };
  return { text: `exited ${code}`, cls: 'exit-failed' };
}

export function CrashLabProcesses({ status, exits, onOpenRun }: Props) {
  const total = Math.max(1, ...status.processes.map((p) => p.lastSeq));
  let prev = 0;
  const segments = status.processes.map((p, i) => {
    const from = prev;
    prev = Math.max(prev, p.lastSeq);
    return { i, from, to: p.lastSeq, p };
  });
  return (
    <section className="panel" aria-label="Lab processes">
      <h3>
        Processes
        {status.runId && (
          <button className="link" aria-label="Open lab run" onClick={() => onOpenRun(status.runId!)}>
            open run {status.runId} →
          </button>
        )}
        {status.referenceRunId && (
          <button className="link" aria-label="Open reference run" onClick={() => onOpenRun(status.referenceRunId!)}>
            reference {status.referenceRunId} →
          </button>
        )}
      </h3>
      <div className="log-bar" aria-label="Log written per process">
        {segments.map(({ i, from, to, p }) => (
          <div key={p.pid} className={`log-seg seg-${i % 4}${p.signal ? ' seg-killed' : ''}`} style={{ left: `${(from / total) * 100}%`, width: `${(Math.max(0, to - from) / total) * 100}%` }} title={`process ${i + 1} (pid ${p.pid}) wrote #${from + 1}–#${to}`}>
            {to - from > 0 && <span>P{i + 1}</span>}
          </div>
        ))}
        {segments.filter((s) => s.p.signal).map((s) => (
          <div key={`k${s.p.pid}`} className="log-crash" style={{ left: `${(s.to / total) * 100}%` }} title={`SIGKILL after #${s.to}`}>✕</div>
        ))}
      </div>
      <table className="mini-table processes" aria-label="Processes table">
        <thead>
          <tr>
            <th>#</th>
            <th>pid</th>
            <th>command</th>
            <th>armed</th>
            <th>replayed</th>
            <th>live</th>
            <th>ended</th>
          </tr>
        </thead>
        <tbody>
          {segments.map(({ i, from, to, p }) => {
            const end = ending(p.signal, p.code);
            return (
              <tr key={p.pid} data-signal={p.signal ?? ''}>
                <td>P{i + 1}</td>
                <td><code>{p.pid}</code></td>
                <td><code>reqon {p.command}</code></td>
                <td>{p.crashAt ?? '—'}</td>
                <td>{p.command === 'resume' ? `#1–#${from} from the log` : '—'}</td>
                <td>{to > from ? `#${from + 1}–#${to}` : 'nothing new'}</td>
                <td className={end.cls}>{end.text}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
      {exits.length > 0 && (
        <ul className="exit-log" aria-label="Process exits">
          {exits.map((e) => (
            <li key={e.pid} className={e.signal ? 'exit-killed' : 'exit-ok'}>
              process {e.pid} {e.signal ? `died: ${e.signal}` : `exited with code ${e.code}`}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
