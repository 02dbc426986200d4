/**
 * Fetch path interpolation (§C.1.3, V2): `{x}` and `{x.y.z}` in a string-literal path. The head is
 * a variable in the scope chain (a fetch has no current record, and `response` is not a variable);
 * the rest is walked as fields.
 *
 * Invariants: an unresolved or null placeholder is an error, never an empty segment; every value
 * is `encodeURIComponent`-encoded, and a segment it fills never comes out empty, `.` or `..`, so
 * data can never change the shape of the path; an integer beyond 2^53 (its digits lost in JSON
 * parsing, `lostDigits`) is an error, never sent as the other number it became.
 */
import type { Span } from '../lang/ast.js';
import { PLACEHOLDER } from '../lang/path-placeholders.js';
import { EvaluatorError, NO_SPAN } from './eval-errors.js';
import type { Scope } from './scope.js';
import { describeValue, fieldOf } from './values.js';


/**
 * A number that is an integer beyond 2^53 (Number.isSafeInteger fails): a JSON number that large
 * came out of parsing with its last digits changed — Twitter's cursor 1489467234237774933 is
 * 1489467234237774800 — so neighbouring ids are one number, and sent on, it names another record
 * or page. What a request path and a next cursor (http/pagination.ts) refuse, as store keys do
 * (stores/keys.ts, whose wording `lostDigitsText` keeps).
 */
export function lostDigits(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && !Number.isSafeInteger(value);
}

/** `1489467234237774800 is an integer beyond 2^53 (9007199254740991): a JSON number that large has lost its last digits`. */
export function lostDigitsText(value: number): string {
  return `${value} is an integer beyond 2^53 (${Number.MAX_SAFE_INTEGER}): a JSON number that large has lost its last digits`;
}

export interface PathContext {
  /** The path literal's span: where errors point. */
  span?: Span;
  /** The request's line, asked only on an error, for a message read without the source. */
  line?: () => number | undefined;
  /**
   * The run's environment as `env()` sees it (`--env`, `REQON_*`). A bare `{NAME}` that no
   * variable binds is read from it — upstream's examples write `{GITHUB_OWNER}` meaning the
   * setting of that name; a variable of the same name always wins.
   */
  env?: (name: string) => string | undefined;
}

/**
 * Fills every placeholder from `scope` (and a bare unbound name from `at.env`). A path segment
 * that a placeholder fills must not come out empty, `.` or `..`: the URL (and any server) would
 * drop or resolve it — `/items/{id}/detail` with id ".." is `/detail`, `/items/{id}` with id ""
 * is the collection `/items/` — so data would change the path after all. That is an R4010 error;
 * the same values inside a segment (`v{id}`) or after the `?` are plain data.
 */
export function interpolatePath(template: string, scope: Scope, at: PathContext = {}): string {
  if (!template.includes('{')) return template;
  const end = template.search(/[?#]/);
  const pathPart = end < 0 ? template : template.slice(0, end);
  const rest = end < 0 ? '' : template.slice(end);
  const parts = pathPart.split('/');
  const segments = parts.map((segment, i) => {
    const filled = fill(segment, scope, at);
    if (filled !== segment && (filled === '' || filled === '.' || filled === '..')) {
      const names = [...segment.matchAll(PLACEHOLDER)].map((m) => `{${m[1]}}`).join('');
      const lineNo = at.line?.();
      throw new EvaluatorError(
        'R4010',
        `Path parameter ${names}${lineNo === undefined ? '' : ` (line ${lineNo})`} is ${filled === '' ? 'empty' : `\`${filled}\``}: as a whole path segment it would change the request's path ` +
          `(\`${pathPart}\` would become \`${parts.map((p, j) => (j === i ? filled : p)).join('/')}\`${filled === '' ? '' : ', which the URL resolves to another path'}); skip such records (\`where\`), or put the value in the query (\`?id={…}\`)`,
        at.span ?? NO_SPAN,
      );
    }
    return filled;
  });
  return segments.join('/') + fill(rest, scope, at);
}

/**
 * A request path, however it was made (`"/users/" + id`, `concat(…)`, a template), must not hold a
 * `.` or `..` segment — nor `%2e%2e`, which URLs resolve the same: the URL would resolve it to
 * another path, out of the source's base path (`/v1` + `/users/../../admin` is `/admin`), so a
 * record whose id is `..` turned a DELETE of one user into a DELETE of a parent resource. An
 * R4010 error before anything is sent; `{placeholder}`s already refuse such values one by one.
 */
export function refuseDotSegments(requestPath: string, at: PathContext = {}): void {
  const end = requestPath.search(/[?#]/);
  const pathPart = end < 0 ? requestPath : requestPath.slice(0, end);
  // Segments as an http(s) URL reads them: `\` is a `/` there, and tabs and newlines are dropped
  // (WHATWG URL), so `..\..\admin` and `.\t.` are dot segments too.
  const asRead = pathPart.replace(/[\t\n\r]/g, '').split(/[/\\]/);
  const dot = asRead.find((segment) => /^(\.|%2e){1,2}$/i.test(segment));
  if (dot === undefined) return;
  const lineNo = at.line?.();
  throw new EvaluatorError(
    'R4010',
    `The request path \`${pathPart}\`${lineNo === undefined ? '' : ` (line ${lineNo})`} has a \`${dot}\` segment, which the URL resolves to another path, out of the one written: ` +
      `a value that reached the path would change which resource the request names. Put values in the path with \`{placeholder}\`s (which refuse such values), skip such records (\`where\`), or send the value in the query`,
    at.span ?? NO_SPAN,
  );
}

function fill(template: string, scope: Scope, at: PathContext): string {
  if (!template.includes('{')) return template;
  const span = at.span ?? NO_SPAN;
  return template.replace(PLACEHOLDER, (_whole, path: string) => {
    const [head, ...rest] = path.split('.');
    let value = scope.get(head!);
    if (value === undefined && rest.length === 0 && at.env) {
      const fromEnv = at.env(head!);
      if (fromEnv !== undefined && fromEnv !== '') value = fromEnv;
    }
    let parent: unknown;
    for (const part of rest) {
      parent = value;
      value = fieldOf(value, part);
    }
    if (value === undefined || value === null) {
      const why =
        scope.get(head!) === undefined
          ? `no variable \`${head}\` is bound here${rest.length === 0 && at.env ? ' and the run has no setting of that name' : ''}; bind it before the request in this action, e.g. \`let ${head} = env("${head}")\`${rest.length === 0 && at.env ? `, or give the run \`--env ${head}=…\`` : ''}`
          : `\`${path}\` is ${value === null ? 'null' : 'absent'}`;
      const lineNo = at.line?.();
      throw new EvaluatorError('R4010', `Path parameter {${path}}${lineNo === undefined ? '' : ` (line ${lineNo})`} did not resolve: ${why}`, span);
    }
    if (lostDigits(value)) {
      // Two message ids 1489467234237774933 and …935 both filled the path as …800: a wrong URL, sent.
      const lineNo = at.line?.();
      const last = rest[rest.length - 1];
      const sibling = last !== undefined ? fieldOf(parent, `${last}_str`) : undefined;
      const fix =
        typeof sibling === 'string'
          ? `fill it from the string the API sends beside it: {${path}_str}`
          : `fill it from the API's string form of the value (as Twitter sends \`id_str\` beside \`id\`), if it sends one`;
      throw new EvaluatorError(
        'R4001',
        `Path parameter {${path}}${lineNo === undefined ? '' : ` (line ${lineNo})`} was not sent: ${lostDigitsText(value)}, so the request would name another resource (two ids could become one URL) — ${fix}`,
        span,
      );
    }
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') {
      return encodeURIComponent(String(value));
    }
    throw new EvaluatorError(
      'R4001',
      `Path parameter {${path}} expected a string or a number but got: ${describeValue(value)}`,
      span,
    );
  });
}
