/**
 * The lab's verdict as the engine computed it: stores equal to the crash-free reference run (with
 * the differences if not) and every effect applied exactly once according to the API's own
 * per-idempotency-key counters.
 */
import type { CrashLabVerdict as Verdict } from '../lib/protocol.js';

function show(value: unknown): string {
  const s = JSON.stringify(value);
  return s === undefined ? '' : s.length > 200 ? `${s.slice(0, 197)}…` : s;
}

export function CrashLabVerdict({ verdict }: { verdict: Verdict }) {
  return (
    <section className={`panel verdict ${verdict.ok ? 'verdict-ok' : 'verdict-bad'}`} aria-label="Verdict">
      <h3>
        <span className={`verdict-chip ${verdict.ok ? 'ok' : 'bad'}`} data-testid="lab-verdict">
          {verdict.ok ? '✓ survived' : '✕ did not survive'}
        </span>
        <span>{verdict.crashes} crash{verdict.crashes === 1 ? '' : 'es'} · final status {verdict.finalStatus}</span>
      </h3>
      <p className="explanation">{verdict.explanation}</p>
      <ul className="checks">
        <li className={verdict.storesEqual ? 'check-ok' : 'check-bad'}>
          {verdict.storesEqual ? '✓' : '✕'} stores equal to the crash-free run
        </li>
        <li className={verdict.effects === null ? 'check-unknown' : verdict.duplicateEffects === 0 ? 'check-ok' : 'check-bad'}>
          {verdict.effects === null ? '? effect counters unavailable' : verdict.duplicateEffects === 0 ? `✓ every effect applied exactly once (${verdict.effects.length} keys)` : `✕ ${verdict.duplicateEffects} effects applied more than once`}
        </li>
      </ul>
      {verdict.storeDiff.length > 0 && (
        <table className="diff-table" aria-label="Store differences">
          <thead>
            <tr><th>change</th><th>path</th><th>reference</th><th>crashed run</th></tr>
          </thead>
          <tbody>
            {verdict.storeDiff.map((d) => (
              <tr key={d.path} className={`diff-${d.change}`}>
                <td><span className={`change-chip change-${d.change}`}>{d.change}</span></td>
                <td><code>{d.path}</code></td>
                <td><code>{show(d.before)}</code></td>
                <td><code>{show(d.after)}</code></td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {verdict.effects && verdict.effects.length > 0 && (
        <table className="mini-table" aria-label="Effect counters">
          <thead>
            <tr><th>idempotency key</th><th>requests seen</th><th>effects applied</th></tr>
          </thead>
          <tbody>
            {verdict.effects.map((e) => (
              <tr key={e.idempotencyKey} className={e.effects === 1 ? '' : 'row-bad'}>
                <td><code>{e.idempotencyKey}</code></td>
                <td>{e.requests}</td>
                <td className={e.effects === 1 ? 'exit-ok' : 'exit-killed'}>{e.effects}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
