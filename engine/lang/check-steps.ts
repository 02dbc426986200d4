/**
 * Step checks: every name a step uses (store, source, transform, schema, jump target) is declared
 * in the mission; every `store` step can compute a stable key (a random key would break
 * idempotent replay, ARCHITECTURE.md); option values are in range; match arms are reachable.
 *
 * Steps are walked recursively (loop bodies, validate fallbacks, match arm blocks). Jumps are
 * collected, not judged here: whether a target is a sequential stage is a pipeline question.
 */
import type { ActionDecl, CallStep, Directive, Expr, FetchOptions, FetchStep, MatchStep, Name, Paginate, Span, Step, StoreStep } from './ast.js';
import { optionSpan, spanOf, type RefExpr } from './ast.js';
import { findNodes } from './node-search.js';
import { indexedName, storeDeleteOf } from './store-delete.js';
import { didYouMean, suggest } from './suggest.js';
import type { CheckContext } from './check-context.js';
import { CHECKPOINT_STORE } from './builtin-names.js';
import { checkBindings } from './check-bindings.js';
import { checkExpr, warnRepeatedKeys } from './check-expressions.js';
import { checkNumber, checkOption, checkRetry, checkStatus, checkWebhookPath } from './check-values.js';

/** Whether `node` (plain AST data) reads the variable `name` anywhere: a `Ref` headed by it. */
function readsVariable(node: unknown, name: string): boolean {
  const reads = (candidate: object): candidate is RefExpr => {
    const ref = candidate as Partial<RefExpr>;
    return ref.kind === 'Ref' && ref.leadingDot !== true && ref.parts?.[0] === name;
  };
  return findNodes(node, reads).length > 0;
}

export interface JumpRef {
  action: Name;
  file: string;
  /** `jump A then retry|continue`: a detour through A, which then needs no stage of its own. */
  detour: boolean;
}

export function checkAction(ctx: CheckContext, action: ActionDecl, jumps: JumpRef[]): void {
  const file = action.file || ctx.rootFile;
  checkSteps(ctx, file, action.steps, jumps);
  checkBindings(ctx, action);
}

function checkSteps(ctx: CheckContext, file: string, steps: readonly Step[] | undefined, jumps: JumpRef[]): void {
  let previous: Step | undefined;
  for (const step of steps ?? []) {
    checkStep(ctx, file, step, jumps, previous);
    previous = step;
  }
}

function checkStep(ctx: CheckContext, file: string, step: Step | undefined, jumps: JumpRef[], previous?: Step): void {
  if (!step || typeof step !== 'object') return;
  switch (step.kind) {
    case 'Fetch':
      if (step.method === 'DELETE' && checkDelete(ctx, file, step)) return;
      checkExpr(ctx, file, step.path);
      checkFetchOptions(ctx, file, step.options, step, false, step.path);
      if (step.method === 'GET' && step.options?.body) {
        // Upstream's missions give a GET's query as `body:` (github-sync's `{ state: "all", per_page: 100 }`);
        // sent as a JSON body, which APIs ignore on a GET: closed issues silently missing.
        ctx.report(
          file,
          'E3055',
          step.options.body,
          'A GET sends its `body` as a JSON request body, which APIs ignore on a GET: its values reach no query',
          'send them as query parameters with `params: { … }` (`get "/issues" { params: { state: "all", per_page: 100 } }`)',
        );
      }
      return;
    case 'Call': {
      const source = step.source?.name ? ctx.sources.get(step.source.name) : undefined;
      if (step.source?.name && !source) {
        ctx.unknown(file, 'E3008', 'source', step.source, ctx.sources.keys());
      } else if (source && !source.spec) {
        ctx.report(
          file,
          'E3009',
          step.source,
          `\`call ${step.source.name}.${step.operation?.name ?? '…'}\` needs an OpenAPI spec, but source \`${step.source.name}\` has none`,
          `declare it \`source ${step.source.name} from "openapi.yaml" { … }\`, or use get/post with a path`,
        );
      }
      checkFetchOptions(ctx, file, step.options, step, true);
      return;
    }
    case 'For': {
      checkExpr(ctx, file, step.collection);
      checkLoopLiteral(ctx, file, step.collection);
      checkResponseName(ctx, file, step.variable, 'loop variable');
      checkExpr(ctx, file, step.where);
      if (step.concurrency !== undefined) {
        const span = ctx.valueOf(file, step, 'concurrency');
        checkNumber(ctx, file, 'concurrency', step.concurrency, 'atLeastOne', span);
      }
      if (step.onError?.mode === 'queue') checkStoreName(ctx, file, step.onError.store);
      ctx.loopVariables.push(step.variable?.name ?? '');
      try {
        checkSteps(ctx, file, step.body, jumps);
      } finally {
        ctx.loopVariables.pop();
      }
      return;
    }
    case 'Map':
      checkExpr(ctx, file, step.source);
      warnRepeatedKeys(ctx, file, step.fields);
      for (const f of step.fields ?? []) checkExpr(ctx, file, f?.value);
      return;
    case 'Apply':
      checkResponseName(ctx, file, step.as, '`apply … as`');
      if (step.transform?.name && !ctx.transforms.has(step.transform.name)) {
        ctx.unknown(file, 'E3013', 'transform', step.transform, ctx.transforms.keys());
      }
      checkExpr(ctx, file, step.target);
      return;
    case 'Validate':
      checkExpr(ctx, file, step.target);
      for (const c of step.constraints ?? []) checkExpr(ctx, file, c?.condition);
      checkSteps(ctx, file, step.fallback, jumps);
      return;
    case 'Store':
      checkStoreStep(ctx, file, step);
      return;
    case 'Let':
      checkExpr(ctx, file, step.value);
      checkResponseName(ctx, file, step.name, '`let`');
      return;
    case 'Match':
      checkMatchStep(ctx, file, step, jumps, previous && requestOf(ctx, previous));
      return;
    case 'Wait': {
      checkExpr(ctx, file, step.eventFilter);
      checkRetry(ctx, file, step.retry);
      checkOption(ctx, file, step.optionSpans, 'timeout', step.timeout, 'duration', step);
      if (step.timeout === 0 && step.retry) {
        const key = Object.hasOwn(step.optionSpans, 'retry') ? 'retry' : 'retryOnTimeout';
        ctx.report(
          file,
          'E3060',
          optionSpan(step.optionSpans, key) ?? step,
          `\`${key}\` never runs on a \`wait\` with \`timeout: 0\`: a zero timeout is a check that carries on with \`webhook\` null when nothing has arrived`,
          'give the wait a timeout to wait for events and retry on, or test `webhook == null` after the check',
        );
      }
      checkOption(ctx, file, step.optionSpans, 'expectedEvents', step.expectedEvents, 'atLeastOne', step);
      checkWebhookPath(ctx, file, step.path);
      if (step.storage) {
        checkStoreName(ctx, file, step.storage.target);
        checkExpr(ctx, file, step.storage.key);
      }
      return;
    }
    case 'Pause':
      checkStoreName(ctx, file, step.persist);
      for (const t of step.resumeOn ?? []) if (t?.kind === 'webhook') checkWebhookPath(ctx, file, t.path);
      if (step.duration) {
        checkNumber(ctx, file, 'duration', step.duration.ms, 'duration', step.duration);
        // Upstream's docs read `pause { duration: "30d", resumeOn: webhook "/approved" }` as "the
        // webhook, or 30 days"; here its only trigger is the webhook, and it waited for ever (helper 82).
        const triggers = step.resumeOn ?? [];
        const hook = triggers.find((t) => t?.kind === 'webhook');
        if (hook?.kind === 'webhook' && !triggers.some((t) => t?.kind === 'timeout')) {
          ctx.report(
            file,
            'E3067',
            step.duration,
            `This pause resumes on its webhook only: no timer is armed, so \`duration\` is never used`,
            `for "the webhook, or after this long", write \`resumeOn: webhook ${JSON.stringify(hook.path?.value ?? '/path')} | timeout\``,
          );
        }
      }
      return;
    case 'Flow':
      checkDirective(ctx, file, step.directive, jumps);
      return;
    default: {
      const unreachable: never = step;
      void unreachable;
    }
  }
}

/**
 * `delete x[k]` (store-delete.ts): a store removal where `x` is a declared store — returns true,
 * having checked it as one (no request options) — else a request. Where `x` is a bare name but
 * no declared store (a variable holding paths, or a store name misspelt or not declared), the
 * request reading is kept and warned about (E3038), saying how to write each meaning.
 */
function checkDelete(ctx: CheckContext, file: string, step: Extract<Step, { kind: 'Fetch' }>): boolean {
  const removal = storeDeleteOf(step, (name) => ctx.stores.has(name));
  if (removal) {
    checkExpr(ctx, file, removal.key);
    const given = Object.keys(step.options?.optionSpans ?? {});
    if (given.length > 0 || step.options?.source) {
      const first = given[0];
      ctx.report(
        file,
        'E3039',
        first !== undefined ? optionSpan(step.options.optionSpans, first)! : step,
        `\`delete ${removal.store}[…]\` removes a record from the store \`${removal.store}\` and takes no request options${first !== undefined ? ` (found \`${first}\`)` : ''}`,
        `to send an HTTP DELETE with options, write the path as a string: \`delete "/${removal.store}/{…}" { … }\``,
      );
    }
    return true;
  }
  const name = indexedName(step);
  if (name === undefined || ctx.part) return false;
  const target = step.path as Extract<Expr, { kind: 'Index' }>;
  const close = suggest(name, ctx.stores.keys());
  ctx.report(
    file,
    'E3038',
    target,
    `\`delete ${name}[…]\` sends an HTTP DELETE of the path \`${name}[…]\` evaluates to: \`${name}\` is not a declared store`,
    `to remove a record from a store, name a declared store${close ? ` (did you mean \`${close}\`?)` : ''}: \`delete ${close ?? 'S'}[key]\`; to send the DELETE without this warning, bind the path first (\`let path = ${name}[…]\`, then \`delete path\`) or write it as a string: \`delete "/${name}/{…}"\``,
  );
  return false;
}

function checkStoreName(ctx: CheckContext, file: string, name: Name | undefined): void {
  if (!name?.name || ctx.stores.has(name.name) || name.name === CHECKPOINT_STORE) return;
  ctx.unknown(file, 'E3007', 'store', name, ctx.stores.keys());
}

function checkFetchOptions(
  ctx: CheckContext,
  file: string,
  options: FetchOptions | undefined,
  stepSpan: { start: number; end: number },
  isCall: boolean,
  path?: Expr,
): void {
  if (!options) return;
  if (options.source?.name) {
    if (!ctx.sources.has(options.source.name)) ctx.unknown(file, 'E3008', 'source', options.source, ctx.sources.keys());
  } else if (!isCall && ctx.sources.size === 0 && !ctx.part) {
    ctx.report(
      file,
      'E3033',
      ctx.wordAt(file, stepSpan.start),
      'This request has no source: the mission declares none, so running it fails',
      'declare one: source Api { auth: none, base: "https://api.example.com" }',
    );
  }
  checkExpr(ctx, file, options.body);
  checkExpr(ctx, file, options.params);
  checkExpr(ctx, file, options.headers);
  checkExpr(ctx, file, options.until);
  checkRetry(ctx, file, options.retry);
  if (options.since?.kind === 'SinceExpr') checkExpr(ctx, file, options.since.value);
  else if (options.since?.key) checkExpr(ctx, file, options.since.key);
  if (options.allow) {
    for (const status of options.allow.statuses ?? []) {
      const span = ctx.findWord(file, options.allow, String(status));
      if (!checkStatus(ctx, file, status, span)) break;
    }
  }
  checkOption(ctx, file, options.optionSpans, 'maxPages', options.maxPages, 'atLeastOne', stepSpan);
  checkOption(ctx, file, options.optionSpans, 'maxItems', options.maxItems, 'atLeastOne', stepSpan);
  checkOption(ctx, file, options.optionSpans, 'timeout', options.timeout, 'requestTimeout', stepSpan);
  if (!options.paginate) warnPagingWithoutPaginate(ctx, file, options, stepSpan);
  else warnPagingParamTwice(ctx, file, options, options.paginate, path);
}

/**
 * `get "/l?page=9" { paginate: page(page, 2) }` sent `?page=9&page=1`, then `page=9&page=2`…: the
 * pagination appends its parameters to the request's own query, so one the path or `params`
 * already sets goes out twice, and an API reads the first or the last as it likes.
 */
function warnPagingParamTwice(ctx: CheckContext, file: string, options: FetchOptions, paginate: Paginate, path: Expr | undefined): void {
  const paging = [paginate.param.name, ...(paginate.sizeParam ? [paginate.sizeParam.name] : [])];
  const own: { name: string; where: string; span: Span }[] = [];
  if (path?.kind === 'String') {
    const cut = path.value.indexOf('?');
    if (cut >= 0) {
      for (const pair of path.value.slice(cut + 1).split('&')) own.push({ name: decodeQueryName(pair.split('=')[0]!), where: 'the path\'s query', span: path });
    }
  }
  if (options.params?.kind === 'Object') {
    // A literal null sends nothing (withParams): no second value.
    for (const entry of options.params.entries) if (entry.kind === 'Property' && entry.value.kind !== 'Null') own.push({ name: entry.key.name, where: '`params`', span: entry.key });
  }
  const twice = own.find((p) => paging.includes(p.name));
  if (!twice) return;
  ctx.report(
    file,
    'E3050',
    twice.span,
    `Query parameter \`${twice.name}\` is set by ${twice.where} and by the pagination: ${paginate.strategy === 'cursor' && twice.name === paginate.param.name ? 'every request from page 2 on' : "every page's request"} sends it twice, and an API reads the first or the last as it likes`,
    `remove it from ${twice.where}: the pagination sends it${paginate.strategy === 'cursor' ? ' (a cursor walk always starts from the first page)' : ' (to start elsewhere than the first page, filter with other parameters)'}`,
  );
}

function decodeQueryName(name: string): string {
  try {
    return decodeURIComponent(name.replace(/\+/g, ' '));
  } catch {
    return name;
  }
}

/**
 * `itemsPath`, `until`, `maxItems` and `maxPages` steer a pagination; without `paginate` the
 * request is sent once and its answer taken whole — `itemsPath: "result.rows"` then stored the
 * envelope as one record (it still tells an in-band error answer apart, so "ignored" would be
 * untrue). Said at the first such option (running keeps the rule).
 */
function warnPagingWithoutPaginate(ctx: CheckContext, file: string, options: FetchOptions, stepSpan: Span): void {
  const given = (['itemsPath', 'until', 'maxItems', 'maxPages'] as const).filter((key) => options[key] !== undefined);
  if (given.length === 0) return;
  const names = given.map((k) => `\`${k}\``).join(', ');
  ctx.report(
    file,
    'E3049',
    ctx.optionValue(file, options.optionSpans, given[0]!, stepSpan),
    `${names} ${given.length === 1 ? 'steers' : 'steer'} a pagination, and this request has no \`paginate\`: its answer is taken whole (one record, envelope and all)`,
    'add the pagination the API uses (`paginate: offset(offset, 100)`, `page(page, 50)` or `cursor(cursor, 100, "next")`), or remove the option; to take a list out of one answer, `for x in response.result.rows` or `store response.result.rows -> …`',
  );
}

/**
 * `let response = …` (or `apply … as response`, `for response in …`): §D.2 reads a bare name as a
 * variable before `response`, but `response.x` from the response itself — so after it, bare
 * `response` is the variable for the rest of the scope (also after later requests) while
 * `response.id` is the last request's. Running keeps that rule; the warning names the trap.
 */
function checkResponseName(ctx: CheckContext, file: string, name: Name | undefined, how: string): void {
  if (name?.name !== 'response') return;
  ctx.report(
    file,
    'E3043',
    name,
    `This ${how} binds a variable named \`response\`: from here on a bare \`response\` is this variable, even after later requests, while \`response.field\` still reads the last request's answer`,
    'give the variable another name (`let result = …`); `store`, `for` and `map` take any expression, so no step needs it to be called `response`',
  );
}

/** The kind of value a literal expression always gives, or undefined when it is no literal. */
function literalKind(expr: Expr | undefined): string | undefined {
  switch (expr?.kind) {
    case 'Number':
      return 'a number';
    case 'String':
      return 'a string';
    case 'Boolean':
      return 'a boolean';
    case 'Null':
      return 'null';
    case 'Object':
      return 'an object';
    case 'Array':
      return 'an array';
    default:
      return undefined;
  }
}

/** `for x in 5`, `for c in "abc"`, `for k in { … }`, `for y in null`: running fails with "must be an array". */
function checkLoopLiteral(ctx: CheckContext, file: string, collection: Expr | undefined): void {
  const kind = literalKind(collection);
  if (!collection || kind === undefined || kind === 'an array') return;
  ctx.report(
    file,
    'E3042',
    collection,
    `A \`for\` loop needs an array, but this is always ${kind}: running fails here`,
    kind === 'an object' ? 'loop over an array of records (`for x in [{ … }, { … }]`), or `keys(obj)` / `values(obj)`' : 'loop over an array: a list (`[1, 2]`), a response field, a store or a variable holding one',
  );
}

function checkStoreStep(ctx: CheckContext, file: string, step: StoreStep): void {
  checkExpr(ctx, file, step.source);
  checkExpr(ctx, file, step.key);
  checkStoreName(ctx, file, step.store);
  const never = (at: Expr, kind: string): void =>
    ctx.report(file, 'E3042', at, `A store writes records (objects), but this is always ${kind}: running fails here`, 'store an object: `{ value: … }` with the fields to keep');
  const source = step.source;
  const sourceKind = literalKind(source);
  if (source && sourceKind !== undefined && sourceKind !== 'an object' && sourceKind !== 'an array') never(source, sourceKind);
  if (source?.kind === 'Array') {
    const odd = (source.elements ?? []).find((e) => literalKind(e) !== undefined && literalKind(e) !== 'an object');
    if (odd) never(odd, `${literalKind(odd)} (an item of the stored array)`);
  }
  if (step.key?.kind === 'Null') {
    ctx.report(file, 'E3042', step.key, 'A store key is never null: running fails here', 'key by a field of each record (`key: .id`), or leave `key:` out to use `id` (else a hash of the record)');
  }
  const src = step.source;
  const key = step.key;
  if (key?.kind === 'Ref' && key.leadingDot && src?.kind === 'Object') {
    // `.x` of a record is its own field only (evaluate.ts): a literal without it keys nothing.
    const entries = src.entries ?? [];
    const field = key.parts[0];
    const has = entries.some((e) => e?.kind === 'Spread' || (e?.kind === 'Property' && e.key?.name === field));
    if (!has && field !== undefined) {
      const bare = key.parts.join('.');
      ctx.report(
        file,
        'E3042',
        key,
        `\`.${bare}\` is a field of the stored record, and this record has no \`${field}\`: the key is null and running fails here`,
        `add \`${field}\` to the record, or key by the value itself: \`key: ${bare}\` (a variable), \`key: response.${bare}\``,
      );
    }
  }
  if (step.key || !src || src.kind !== 'Object') return;
  const entries = src.entries ?? [];
  const hasId = entries.some((e) => e?.kind === 'Spread' || (e?.kind === 'Property' && e.key?.name === 'id'));
  if (hasId) return;
  ctx.report(
    file,
    'E3022',
    src,
    `Cannot compute a stable key for records stored in \`${step.store?.name ?? '?'}\`: the object has no \`id\``,
    `add an \`id\` property, or a key: \`-> ${step.store?.name ?? 'store'} { key: .field }\``,
  );
}

/** The step as an HTTP request (a fetch that is no store removal, a `call`), else undefined. */
function requestOf(ctx: CheckContext, step: Step): FetchStep | CallStep | undefined {
  if (step.kind === 'Call') return step;
  return step.kind === 'Fetch' && !storeDeleteOf(step, (name) => ctx.stores.has(name)) ? step : undefined;
}

/** `request`: the request right before the match, whose last answer its status arms dispatch on. */
function checkMatchStep(ctx: CheckContext, file: string, step: MatchStep, jumps: JumpRef[], request?: FetchStep | CallStep): void {
  checkExpr(ctx, file, step.subject);
  const arms = step.arms ?? [];
  /** Statuses already handled by an arm without a guard, with that arm's offset. */
  const handled = new Map<number, number>();
  let catchAll: number | undefined;
  let deadReported = false;
  const explicit = request?.options?.allow?.statuses ?? [];
  // A since fetch takes a 304 (Not Modified) as its empty answer (fetch-step.ts), as if allowed.
  const allowed = request?.options?.since ? [...explicit, 304] : explicit;
  // A status arm tests the last response's HTTP status (reference §C.8), whatever the subject:
  // `match r.code { 404 -> … }` over records never took its 404 arm (helper 66). Refused where the
  // subject is a loop's record or a value (E3063); said where it may be the response under
  // another name (`let order = response`, E3064). Once a match.
  const subject = step.subject;
  const subjectIsResponse = subject?.kind === 'Ref' && !subject.leadingDot && subject.parts.length === 1 && subject.parts[0] === 'response';
  const ofRecord = subject !== undefined && (subject.kind !== 'Ref' || subject.leadingDot || ctx.loopVariables.includes(subject.parts[0]!));
  let statusOfOther = false;
  const checkArmStatus = (status: number, span: Span, unguarded: boolean): void => {
    if (!subjectIsResponse && subject && !statusOfOther) {
      statusOfOther = true;
      const text = ctx.sourceOf(file, spanOf(subject)).replace(/\s+/g, ' ');
      ctx.report(
        file,
        ofRecord ? 'E3063' : 'E3064',
        span,
        `\`${status} ->\` tests the HTTP status of the last response, not \`${text}\`: a number arm of a match step is a status (reference §C.8)`,
        `to compare \`${text}\` with ${status}, write \`c where c == ${status} ->\`; if the status is what is meant, match \`response\``,
      );
    }
    if (!checkStatus(ctx, file, status, span)) return;
    if (request && (status < 200 || status > 299) && !allowed.includes(status)) {
      // A final status the request does not allow fails it before the match runs.
      ctx.report(
        file,
        'E3045',
        span,
        `A ${status} never reaches this arm: it fails the request ${ctx.where(file, request.start, file)}, which does not allow it, before the match`,
        `add \`allow: [${[...explicit, status].join(', ')}]\` to the request, so a ${status} is its answer and this arm takes it`,
      );
    }
    const earlier = handled.get(status);
    if (earlier !== undefined) {
      ctx.report(
        file,
        'E3025',
        span,
        `Status ${status} is already handled by an earlier arm`,
        `the arm ${ctx.where(file, earlier, file)} always takes ${status}; merge the two arms or add a \`where\` guard to the first`,
      );
    } else if (unguarded) {
      handled.set(status, span.start);
    }
  };
  for (const arm of arms) {
    if (!arm) continue;
    if (catchAll !== undefined && !deadReported) {
      ctx.report(
        file,
        'E3030',
        arm,
        'This arm can never run: the `_` arm before it matches everything',
        `move the \`_\` arm (${ctx.where(file, catchAll, file)}) last`,
      );
      deadReported = true; // one warning per match: the rest follow from the same cause
    }
    const p = arm.pattern;
    switch (p?.kind) {
      case 'Wildcard':
        if (!arm.guard && catchAll === undefined) catchAll = arm.start;
        break;
      case 'SchemaPattern':
      case 'SchemaArrayPattern':
        if (p.schema?.name && !ctx.schemas.has(p.schema.name)) checkResponseName(ctx, file, p.schema, 'match arm');
        // A name that is no schema binds (ast.ts ArmPattern) only when its arm reads it: else a typo.
        if (p.schema?.name && !ctx.schemas.has(p.schema.name) && !readsVariable([arm.guard, arm.body], p.schema.name) && !ctx.part) {
          const binds = p.kind === 'SchemaPattern' ? '`v where v is string ->` binds the value' : '`[single] ->` binds the one item of a one-item list';
          const help = didYouMean(p.schema.name, [...ctx.schemas.keys()]) ?? `a name that is no declared schema binds only when its arm reads it (${binds})`;
          ctx.report(file, 'E3014', p.schema, `Unknown schema \`${p.schema.name}\``, help);
        }
        break;
      case 'EmptyArrayPattern':
        break;
      case 'StatusPattern':
        checkArmStatus(p.status, p, !arm.guard);
        break;
      case 'StatusListPattern':
        for (const s of p.statuses) checkArmStatus(s.status, s, !arm.guard);
        break;
      case 'ObjectPattern': // its keys and literals are all it names: nothing to look up
      case undefined:
        break;
      default: {
        const unreachable: never = p;
        void unreachable;
      }
    }
    checkExpr(ctx, file, arm.guard);
    const body = arm.body;
    if (body?.kind === 'Directive') checkDirective(ctx, file, body.directive, jumps);
    else if (body?.kind === 'Steps') checkSteps(ctx, file, body.steps, jumps);
  }
}

function checkDirective(ctx: CheckContext, file: string, d: Directive | undefined, jumps: JumpRef[]): void {
  if (!d) return;
  switch (d.kind) {
    case 'Abort':
      checkExpr(ctx, file, d.messageExpr);
      return;
    case 'Continue':
    case 'Skip':
      return;
    case 'Retry':
      checkRetry(ctx, file, d.config);
      return;
    case 'Queue':
      checkStoreName(ctx, file, d.store);
      checkExpr(ctx, file, d.item);
      checkExpr(ctx, file, d.key);
      return;
    case 'Jump':
      if (d.action?.name) jumps.push({ action: d.action, file, detour: d.then !== undefined });
      return;
    default: {
      const unreachable: never = d;
      void unreachable;
    }
  }
}
