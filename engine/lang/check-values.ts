/**
 * Value checks: numbers within their allowed ranges, HTTP statuses, cron expressions, `at`
 * date-times, time zones and webhook paths. Each takes the span to blame and reports through the
 * context; none of them throws, whatever the value.
 *
 * Message shape for values (codes.ts): "`maxAttempts` expected an integer ≥ 1 but got: 0".
 */
import { Cron } from 'croner';
import type { OptionSpans, RetryConfig, Span, StringLiteral } from './ast.js';
import type { CheckContext } from './check-context.js';
import { atInstant, isDateTime } from './zone-time.js';

export type Bound = 'atLeastOne' | 'nonNegative' | 'positive' | 'duration' | 'requestTimeout' | 'responseBytes';

/** The longest request timeout: the longest a Node timer waits (2^31 − 1 ms, about 24.8 days). */
export const MAX_REQUEST_TIMEOUT_MS = 2_147_483_647;
/** The largest response body: 512 MiB, about the longest text a run can hold (a body becomes one). */
export const MAX_RESPONSE_BYTES = 512 * 1024 * 1024;

/**
 * The longest pause or wait timeout: 36500 days (about 100 years). A due instant is the recorded
 * `now` plus the duration, and must stay a date the log, `reqon show` and the studio can print
 * (JavaScript dates end at 8.64e15 ms, year 275760); a century is far beyond any real pause.
 */
export const MAX_DURATION_MS = 36_500 * 24 * 60 * 60 * 1000;

const BOUND_TEXT: Record<Bound, string> = {
  atLeastOne: 'a number ≥ 1',
  nonNegative: 'a number ≥ 0',
  positive: 'a number > 0',
  duration: 'a duration from 0 to 36500d (about 100 years)',
  requestTimeout: `milliseconds from 1 to ${MAX_REQUEST_TIMEOUT_MS} (about 24.8 days, the longest a timer waits)`,
  responseBytes: `bytes from 1 to ${MAX_RESPONSE_BYTES} (512 MiB, about the longest text a run can hold)`,
};

function inBound(value: number, bound: Bound): boolean {
  switch (bound) {
    case 'atLeastOne':
      return value >= 1;
    case 'nonNegative':
      return value >= 0;
    case 'positive':
      return value > 0;
    case 'duration':
      return value >= 0 && value <= MAX_DURATION_MS;
    case 'requestTimeout':
      return value >= 1 && value <= MAX_REQUEST_TIMEOUT_MS;
    case 'responseBytes':
      return value >= 1 && value <= MAX_RESPONSE_BYTES;
  }
}

/** Reports `value` (when present) if it lies outside `bound`. */
export function checkNumber(
  ctx: CheckContext,
  file: string,
  label: string,
  value: number | undefined,
  bound: Bound,
  span: Span | undefined,
): void {
  if (value === undefined || value === null || !span) return;
  if (typeof value === 'number' && Number.isFinite(value) && inBound(value, bound)) return;
  ctx.report(file, 'E3023', span, `\`${label}\` expected ${BOUND_TEXT[bound]} but got: ${String(value)}`);
}

/**
 * `checkNumber` for option `key` of a block (the label is the key), blaming where its value is
 * written — located only when there is a value to judge, as most options are absent.
 */
export function checkOption(
  ctx: CheckContext,
  file: string,
  spans: Readonly<OptionSpans> | undefined,
  key: string,
  value: number | undefined,
  bound: Bound,
  fallback: Span,
): void {
  if (value === undefined || value === null) return;
  if (typeof value === 'number' && Number.isFinite(value) && inBound(value, bound)) return; // no span to locate
  checkNumber(ctx, file, key, value, bound, ctx.optionValue(file, spans, key, fallback));
}

export function checkRetry(ctx: CheckContext, file: string, retry: RetryConfig | undefined): void {
  if (!retry) return;
  checkOption(ctx, file, retry.optionSpans, 'maxAttempts', retry.maxAttempts, 'atLeastOne', retry);
  checkOption(ctx, file, retry.optionSpans, 'initialDelay', retry.initialDelay, 'nonNegative', retry);
  checkOption(ctx, file, retry.optionSpans, 'maxDelay', retry.maxDelay, 'nonNegative', retry);
  checkOption(ctx, file, retry.optionSpans, 'delay', retry.delay, 'nonNegative', retry);
  checkOption(ctx, file, retry.optionSpans, 'timeout', retry.timeout, 'requestTimeout', retry);
}

export function isHttpStatus(n: number): boolean {
  return Number.isInteger(n) && n >= 100 && n <= 599;
}

export function checkStatus(ctx: CheckContext, file: string, status: number, span: Span): boolean {
  if (isHttpStatus(status)) return true;
  ctx.report(file, 'E3024', span, `Expected an HTTP status (100–599) but got: ${String(status)}`);
  return false;
}

const FIVE_FIELDS = 'a cron expression has five fields: minute hour day-of-month month day-of-week';

/**
 * Why `expression` is not a five-field cron this engine reads (`@daily` and the like aside), as
 * help to show whole, or undefined. The cron library also takes six fields, seconds first:
 * `0 9 * * 1 *` then meant minute 9 of every hour in January, not 09:00 on Mondays, and
 * `* * * * * *` every second.
 */
export function cronFieldsProblem(expression: string): string | undefined {
  const text = expression.trim();
  if (text.startsWith('@')) return undefined;
  const parts = text === '' ? [] : text.split(/\s+/);
  if (parts.length !== 5) return `it has ${parts.length} field${parts.length === 1 ? '' : 's'}; ${FIVE_FIELDS}`;
  // Forms of other crons the library reads otherwise, silently (helper 97): Quartz's `?` ("no
  // specific value") became the worker's start time — `0 9 ? * *` fired on one day a month — and
  // a day of week `5L` ("the last Friday") fired every Friday.
  if (parts.some((part) => part.includes('?'))) return '`?` (Quartz\'s "no specific value") is not read here: write `*`';
  const lastWeekday = /(?:^|,)([0-7]|sun|mon|tue|wed|thu|fri|sat)L(?:$|,)/i.exec(parts[4]!);
  if (lastWeekday) return `a day of week "${lastWeekday[1]}L" is not read here: write "${lastWeekday[1]}#L" for the last one of the month`;
  return undefined;
}

export function checkCron(ctx: CheckContext, file: string, expression: StringLiteral, timezone?: string): void {
  const fields = cronFieldsProblem(expression.value);
  if (fields !== undefined) {
    ctx.report(file, 'E3026', expression, `Invalid cron expression "${expression.value}"`, fields);
    return;
  }
  try {
    const cron = new Cron(expression.value, { paused: true, timezone: timezone !== undefined && isTimeZone(timezone) ? timezone : 'UTC' });
    // Valid syntax that no date matches (the 30th of February) never fires: the worker would
    // register it and do nothing, for ever.
    if (cron.nextRun() === null) {
      ctx.report(
        file,
        'E3026',
        expression,
        `The cron expression "${expression.value}" never fires: no date matches it`,
        'check the day of the month against the month (February has at most 29 days; April, June, September and November 30)',
      );
    }
  } catch (e) {
    // The library's own words, less what contradicts ours (it counts six fields as valid).
    const reason = (e instanceof Error ? e.message : String(e)).replace(/^CronPattern:\s*/, '').replace(/exactly five or six space separated parts are required\.?/i, 'not a cron expression or one of @yearly, @monthly, @weekly, @daily, @hourly');
    ctx.report(
      file,
      'E3026',
      expression,
      `Invalid cron expression "${expression.value}"`,
      `${reason}; ${FIVE_FIELDS}`,
    );
  }
}

export function checkAt(ctx: CheckContext, file: string, when: StringLiteral, timezone?: string): void {
  if (isDateTime(when.value)) {
    // A placeholder such as "2024-12-25 00:00 UTC" in an old example: upstream accepts it, and a
    // worker fires a past `at` once when it registers it (worker/schedules.ts firstFireAt).
    // In the schedule's zone, as the worker fires it: UTC where it names none (helper 98: the
    // widest zone's offset let a time 3 hours past in UTC pass as future).
    const latest = atInstant(when.value, timezone !== undefined && isTimeZone(timezone) ? timezone : 'UTC')!;
    if (latest < Date.now()) {
      ctx.report(
        file,
        'E3037',
        when,
        `The schedule time "${when.value}"${timezone ? ` (${timezone})` : ''} is already past: a worker fires it once, as soon as it registers the schedule`,
        'write a future date-time, or run the mission by hand (`reqon run`)',
      );
    }
    return;
  }
  ctx.report(
    file,
    'E3027',
    when,
    `Expected a date-time but got: "${when.value}"`,
    'write an ISO-8601 date-time such as "2025-06-01T09:00:00Z"',
  );
}

export function isTimeZone(name: string): boolean {
  if (name.trim() === '') return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

export function checkTimeZone(ctx: CheckContext, file: string, zone: StringLiteral): void {
  if (isTimeZone(zone.value)) return;
  ctx.report(
    file,
    'E3028',
    zone,
    `Unknown time zone "${zone.value}"`,
    'use an IANA time zone name such as "UTC" or "Europe/London"',
  );
}

export function checkWebhookPath(ctx: CheckContext, file: string, path: StringLiteral | undefined): void {
  if (!path || typeof path.value !== 'string') return;
  const text = path.value;
  if (!text.startsWith('/')) {
    ctx.report(file, 'E3029', path, `Expected a webhook path starting with "/" but got: "${text}"`, `write "/${text}"`);
    return;
  }
  // The worker matches a delivery by its request's path as it arrives (URL.pathname): without
  // the query and fragment, percent-encoded, dot segments resolved. A path that is not already in
  // that form can never be delivered to; the run would wait until its timeout, or for ever.
  let arrives: string;
  try {
    arrives = new URL(text, 'http://127.0.0.1').pathname;
  } catch {
    return;
  }
  if (arrives === text) return;
  const cut = /[?#]/.exec(text);
  if (cut) {
    const what = cut[0] === '?' ? 'a query' : 'a fragment';
    ctx.report(
      file,
      'E3029',
      path,
      `A webhook is matched by its path alone, and "${text}" holds ${what}: a delivery to it arrives at "${arrives}", so this never receives it`,
      `write "${arrives}"; a delivery's ${cut[0] === '?' ? 'query' : 'fragment'} is not looked at`,
    );
    return;
  }
  // `{order}` reads as a placeholder, but a webhook path is literal: its percent-encoded form is
  // one path every wait of the mission shares, never one per order (helper 80).
  const placeholder = /\{[^{}]*\}/.exec(text);
  ctx.report(
    file,
    'E3029',
    path,
    `"${text}" is no path as a request sends it: a delivery to it arrives at "${arrives}", so this never receives it`,
    placeholder
      ? `a webhook path is literal: \`${placeholder[0]}\` is not filled in. For a path of each wait's own, leave \`path:\` out: the wait then listens on /webhook/<run>/<wait id> (\`reqon show\` names it)`
      : `write "${arrives}"`,
  );
}
