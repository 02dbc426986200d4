/**
 * The lab's verdict as the engine computed it: each check it made, in its own words (✓ passed,
 * ✕ failed, ? could not be checked — never a ✓ for something not checked), the store differences
 * if any, and the writes counted per Idempotency-Key at the lab's proxy. A lab in which no crash
 * happened is "not tested", whatever else held.
 */
import type { CrashLabVerdict as Verdict } from '../../lib/protocol.js';
import { jsonText } from '../../lib/visible-text.js';

function show(value: unknown): string {
  const s = jsonText(value);
  return s === undefined ? '' : s.length > 200 ? `${s.slice(0, 197)}…` : s;
}

export function CrashLabVerdict({ verdict }: { verdict: Verdict }) {
  // A check that could not be made (and none failed) is "not fully checked", neither ✓ nor ✕.
  const kind = !verdict.tested ? 'untested' : verdict.ok ? 'ok' : verdict.checks.some((c) => c.ok === false) ? 'bad' : 'partial';
  return (
    <section className={`panel verdict verdict-${kind}`} aria-label="Verdict">
      <h3>
        <span className={`verdict-chip ${kind}`} data-testid="lab-verdict">
          {kind === 'untested' ? 'not tested: no crash happened' : kind === 'ok' ? '✓ survived' : kind === 'partial' ? '◐ not fully checked' : '✕ did not survive'}
        </span>
        <span>{verdict.crashes} crash{verdict.crashes === 1 ? '' : 'es'} · final status {verdict.finalStatus}</span>
      </h3>
      <p className="explanation">{verdict.explanation}</p>
      <ul className="checks" aria-label="Checks">
        {verdict.checks.map((c) => (
          <li key={c.name} data-check={c.name} className={c.ok === null ? 'check-unknown' : c.ok ? 'check-ok' : 'check-bad'}>
            {c.ok === null ? '?' : c.ok ? '✓' : '✕'} {c.label}
          </li>
        ))}
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
      {verdict.effects.length > 0 && (
        <table className="mini-table" aria-label="Effect counters">
          <thead>
            <tr><th>idempotency key</th><th>requests at the proxy</th><th>reference writes matched</th></tr>
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
