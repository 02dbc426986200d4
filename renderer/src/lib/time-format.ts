/**
 * Human formatting of instants and durations for a dense developer UI: durations are short
 * ("812 ms", "4.2 s", "3 m 05 s", "2 d 4 h"), clocks are local 24-hour times with milliseconds.
 * Pure functions; the current time is always passed in, never read here.
 */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms)) return '—';
  const sign = ms < 0 ? '-' : '';
  const a = Math.abs(ms);
  if (a < 1000) return `${sign}${Math.round(a)} ms`;
  if (a < 60_000) return `${sign}${(a / 1000).toFixed(a < 10_000 ? 2 : 1)} s`;
  if (a < 3_600_000) {
    const m = Math.floor(a / 60_000);
    const s = Math.floor((a % 60_000) / 1000);
    return `${sign}${m} m ${String(s).padStart(2, '0')} s`;
  }
  if (a < 86_400_000) {
    const h = Math.floor(a / 3_600_000);
    const m = Math.floor((a % 3_600_000) / 60_000);
    return `${sign}${h} h ${String(m).padStart(2, '0')} m`;
  }
  const d = Math.floor(a / 86_400_000);
  const h = Math.floor((a % 86_400_000) / 3_600_000);
  return `${sign}${d} d ${h} h`;
}

function pad(n: number, width = 2): string {
  return String(n).padStart(width, '0');
}

/** "14:03:22.481" in local time. */
export function formatClock(at: number): string {
  const d = new Date(at);
  return `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}`;
}

/** "2026-11-29 14:03:22" in local time. */
export function formatDateTime(at: number): string {
  const d = new Date(at);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

/** "3 m 05 s ago" / "in 2 h 10 m" relative to `now`. */
export function formatRelative(at: number, now: number): string {
  const delta = at - now;
  if (Math.abs(delta) < 1000) return 'now';
  return delta > 0 ? `in ${formatDuration(delta)}` : `${formatDuration(-delta)} ago`;
}

/**
 * A timeline bar's duration: a bar ends at its step's last logged event, so a step not finished
 * (a pause still waited on, a step its process was killed in) lasted at least that — "≥ 15 ms".
 */
export function barDuration(bar: { startAt: number; endAt: number; status: string }): string {
  const d = formatDuration(bar.endAt - bar.startAt);
  return bar.status === 'running' ? `≥ ${d}` : d;
}
