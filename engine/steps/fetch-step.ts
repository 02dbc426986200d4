/**
 * HTTP steps: `get/post/put/patch/delete` and `call Source.op` (§C.1), journaled attempt by
 * attempt and page by page.
 *
 * Each page is one effect (`effectId(run, step, 'http', page)`), whose id is also the
 * Idempotency-Key of mutating requests. Every attempt is `http.request` (intent) then
 * `http.response` or `http.error` with the verdict (retry, success, allowed, fail). For
 * POST/PUT/PATCH/DELETE the intent is committed durably before the request leaves the process;
 * for GET it rides on the next commit (a lost read is simply read again). On replay the recorded
 * attempts answer; a page whose last recorded attempt had no outcome, or was to be retried, goes
 * on live with the same key.
 */
import type { CallExpr, CallStep, Expr, FetchStep, FetchOptions, RefExpr } from '../lang/ast.js';
import { evaluate } from '../eval/evaluate.js';
import { EvaluatorError, withinDeclaration } from '../eval/eval-errors.js';
import { EVAL_RULES_FORMAT } from '../eval/scope.js';
import { interpolatePath, lostDigits, lostDigitsText, refuseDotSegments } from '../eval/path-template.js';
import { Scope, type EvalContext } from '../eval/scope.js';
import { isTruthy } from '../eval/values.js';
import type { EventPayloads, StoredEvent } from '../log/events.js';
import { COMPUTED_PATH_PARTS_FORMAT, EMPTY_READ_ANSWER_FORMAT, PAGE_END_RULES_FORMAT, PAGE_SIGNAL_FORMS_FORMAT, WAIT_AND_UNTIL_RULES_FORMAT } from '../log/events.js';
import { effectId } from '../journal/effect-id.js';
import { Effect } from '../journal/effect.js';
import { DamagedLogError } from '../journal/journal.js';
import { NondeterminismError } from '../journal/nondeterminism-error.js';
import { describeRequest, describeRequestChange, pathOf, sameRequest } from '../journal/request-identity.js';
import { namedValuesSha256 } from '../http/named-values.js';
import { createRedactor, MIN_SECRET_LENGTH, REDACTED, type Redactor } from '../http/redact.js';
import type { RequestIdentity } from '../log/events.js';
import { canonicalJson, describeValue, withItemsField } from '../eval/values.js';
import { hash } from 'node:crypto';
import { answerExcerpt, endpointOf, executeRequest, limiterKeyOf, policyOf, tellBreaker, type RequestSpec } from '../http/client.js';
import { classifyAttempt, failureMessage, type AttemptOutcome, type Decision } from '../http/retry-policy.js';
import { resolveOperation } from '../http/openapi.js';
import { linkHeaderNext } from '../http/link-header.js';
import { countedMore, errorFieldOf, saysMore } from '../http/page-checks.js';
import { describeTruncation, itemsOf, listFieldOf, paginate, PaginationError, type PaginationPlan } from '../http/pagination.js';
import { buildUrl, mergeHeaders, type QueryParams } from '../http/request-builder.js';
import { FetchError } from '../http/retry-policy.js';
import { checkpointKey, defaultSinceFormat, extractUpdateFrom, formatLastSync, sinceExprValue, sincePlacement } from '../http/since.js';
import { StepError } from './signals.js';
import { lastCheckpointOf, type CheckpointApi } from './http-runtime.js';
import { evalContext, journaledInputs, type Frame, type StepRuntime } from './step-runtime.js';
import type { StepOutcome } from './step-runtime.js';
import { spanOf } from '../lang/ast.js';
import { walkExpr } from '../lang/check-expressions.js';

const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const NOT_MODIFIED = 304;
/** The log format from which a since fetch answered 204 (or 2xx with no body) is an empty list. */
const EMPTY_SINCE_ANSWER_FORMAT = 4;

interface PageAnswer {
  status: number;
  body: unknown;
  /** The answer had no body, not a JSON `null` (RecordedResponse.empty). */
  empty?: true;
  /** Lower-cased names, as recorded. */
  headers: Record<string, string>;
}

/** Where a streamed paginated fetch hands each page's items (see MissionModel.streamedStore). */
export interface PageSink {
  /** Stores one page, in log order; `firstIndex` is the position of its first item in the whole response. */
  store(items: unknown[], firstIndex: number): Promise<void>;
  /** The store step's path, where its writes are recorded. */
  path: string;
  /**
   * A page's writes leave nothing but their rows and events (a sql/nosql table): a finished page
   * may be taken as recorded on a resume (Journal.skipFinishedPages).
   */
  tableWrites: boolean;
}

export async function runFetch(
  step: FetchStep | CallStep,
  path: string,
  frame: Frame,
  rt: StepRuntime,
  sink?: PageSink,
): Promise<StepOutcome> {
  const options = step.options;
  const sourceName = step.kind === 'Call' ? step.source.name : (options.source?.name ?? rt.model.defaultSource?.name.name);
  if (!sourceName) throw new StepError('no-source', 'No sources defined in this mission: declare one with `source Name { auth: none, base: "https://…" }`');
  const source = rt.http.source(sourceName);
  const ctx = evalContext(rt, frame, path);

  let method: string;
  let requestPath: string;
  let operationId: string | undefined;
  if (step.kind === 'Call') {
    const operation = resolveOperation(rt.http.spec(source), step.operation.name);
    method = operation.method;
    operationId = operation.operationId;
    requestPath = interpolatePath(operation.pathTemplate, frame.scope, { span: spanOf(step.operation), env: (name) => ctx.inputs.env(name) });
  } else {
    method = step.method;
    requestPath =
      step.path.kind === 'String'
        ? interpolatePath(step.path.value, frame.scope, {
            span: spanOf(step.path),
            line: () => rt.model.stepLine(frame.action, step.start),
            env: (name) => ctx.inputs.env(name),
          })
        : String(evaluate(step.path, ctx));
    if (step.path.kind !== 'String' && rt.http.logFormat >= COMPUTED_PATH_PARTS_FORMAT) refuseEmptyPathParts(step.path, requestPath, ctx, () => rt.model.stepLine(frame.action, step.start));
    refuseDotSegments(requestPath, { span: spanOf(step.path), line: () => rt.model.stepLine(frame.action, step.start) });
  }
  // `params: { … }` (upstream's docs): the URL's query, so the request's identity (its URL) covers them.
  if (options.params) requestPath = withParams(requestPath, evaluate(options.params, ctx));
  const body = options.body ? evaluate(options.body, ctx) : undefined;

  // Source headers are evaluated in the mission's root scope, once per request.
  const rootCtx = { scope: new Scope(), response: undefined, inputs: journaledInputs(rt, path), logFormat: rt.http.logFormat };
  const sourceHeaders: Record<string, string> = {};
  for (const h of source.headers) {
    let evaluated: unknown;
    try {
      evaluated = evaluate(h.value, rootCtx);
    } catch (error) {
      // (Runs recorded before log format 7 failed with the bare message: their verify compares it.)
      throw rt.http.logFormat < EVAL_RULES_FORMAT ? error : withinDeclaration(error, `source \`${source.name.name}\`, header "${h.name.value}"`);
    }
    const value = String(evaluated ?? '');
    sourceHeaders[h.name.value] = h.value.kind === 'String' && value.includes('${') ? headerVariables(value, h.name.value, source.name.name, rt) : value;
  }

  refuseProxies(source, rootCtx);
  // `headers: { … }` on the request (upstream's docs): over the source's, in the request's identity as they are.
  const requestHeaders = options.headers ? mergeHeaders(sourceHeaders, headersOf(evaluate(options.headers, ctx))) : sourceHeaders;

  const since = await sinceParts(options, sourceName, rt.http.checkpointApi(source), requestPath, operationId, path, frame, rt);
  const base = rt.http.base(source);
  const mutating = MUTATING.has(method);

  // Each page's effect id, as its request was named: page.completed and fetch.completed name the
  // same effect (in a fork they are made after the walk may have left the copied stretch).
  const pageIds: string[] = [];
  const fetchPage = async (pageQuery: QueryParams, index: number): Promise<PageAnswer> => {
    const id = (pageIds[index] = pageEffectId(path, index, rt));
    const spec: RequestSpec = {
      source: sourceName,
      method,
      base,
      path: requestPath,
      sinceQuery: since?.query,
      pageQuery,
      sourceHeaders: requestHeaders,
      sinceHeaders: since?.headers,
      body,
      ...(mutating ? { idempotencyKey: id } : {}),
      // 304 to a since fetch (If-Modified-Since) is "nothing changed since": an empty result, not a failure.
      allow: since ? [...(options.allow?.statuses ?? []), NOT_MODIFIED] : options.allow?.statuses,
      retry: options.retry ?? source.retry,
      sourceTimeout: options.timeout ?? source.timeout,
      ...(source.maxResponseBytes !== undefined ? { maxResponseBytes: source.maxResponseBytes } : {}),
      rateLimit: source.rateLimit,
      circuitBreaker: source.circuitBreaker,
    };
    return answerPage(spec, id, path, mutating, rt, () => rt.model.stepLine(frame.action, step.start));
  };

  let status = 0;
  let pages = 1;
  let truncated = false;
  /** The field of an in-band error a since fetch was answered with (no list beside it): no checkpoint advances. */
  let inBandError: string | undefined;
  /** The list a paginated fetch's records look to be in, when they were taken from another: no checkpoint advances. */
  let recordsInDoubt: string | undefined;
  /** Where the answer of a since fetch without `paginate` says more records follow: no checkpoint advances. */
  let moreFollow: string | undefined;
  let value: unknown;
  let valueInAnswer = false;
  let itemCount: number | undefined;
  if (options.paginate) {
    const p = options.paginate;
    const plan: PaginationPlan = {
      strategy: p.strategy,
      param: p.param.name,
      ...(p.pageSize !== undefined ? { pageSize: p.pageSize } : {}),
      ...(p.cursorPath ? { cursorPath: p.cursorPath.value } : {}),
      ...(p.sizeParam ? { sizeParam: p.sizeParam.name } : {}),
      ...(p.firstPage !== undefined ? { firstPage: p.firstPage } : {}),
      ...(options.itemsPath ? { itemsPath: options.itemsPath.value } : {}),
      ...(options.maxPages !== undefined ? { maxPages: options.maxPages } : {}),
      ...(options.maxItems !== undefined ? { maxItems: options.maxItems } : {}),
    };
    const until = options.until;
    // On a resume, the finished pages of a streamed sync are taken as recorded (their writes are
    // in the table): pagination starts at the first page the log does not show finished. Only
    // where a page's item count is all the walk takes from it (offset or page numbers, no
    // `until`, no backfill record of its own).
    const finished =
      sink?.tableWrites && plan.strategy !== 'cursor' && !until && !options.backfill && rt.journal.replaying
        ? rt.journal.skipFinishedPages(path, sink.path, plan.pageSize!, (body) =>
            itemsOf(body, plan.itemsPath).length === 0 ? undefined : listFieldOf(body, plan.itemsPath) !== undefined,
          )
        : { pages: 0, items: 0 };
    // The fetch's status is its first page's (below); a finished page taken as recorded was that page.
    let firstStatus = finished.firstStatus;
    if (finished.pages > 0) {
      rt.progress(`${path}: ${finished.pages} finished page(s), ${finished.items} record(s), taken as recorded`);
      // The rate limiter learns the window from the last of them, as a walk of them would leave it.
      if (finished.lastAnswer) observeRecorded(rt, { source: sourceName, path: requestPath, rateLimit: source.rateLimit }, finished.lastAnswer);
    }
    let streamed = finished.items;
    // The envelope field every page's items sat under, if one did (null: pages disagreed).
    let itemsField: string | null | undefined;
    /** Each page's next page as its Link header names it (GitHub's way of saying more follow). */
    const linkedNext = new Map<number, string>();
    /** Each page's count of records as its X-Total-Count header gives it (json-server, many REST APIs). */
    const headerTotals = new Map<number, number>();
    const pageUrl = (query: QueryParams) => `${method} ${rt.http.redactor.url(buildUrl(base, requestPath, [...(since?.query ?? []), ...query]))}`;
    const result = await paginate(plan, {
      fetchPage: async (query, index) => {
        const answer = await fetchPage(query, index);
        const next = linkHeaderNext(answer.headers['link']);
        if (next !== undefined) linkedNext.set(index, next);
        const total = totalCountHeader(answer.headers);
        if (total !== undefined) headerTotals.set(index, total);
        // The fetch's status (what `match` sees, what lets its checkpoint advance) is its first
        // page's: whether the resource answered. It was the last page's, so pages of records
        // ending in an allowed 404 or a 204 past the end (Django's "Invalid page.") took a
        // `404 -> skip` arm and never advanced their checkpoint.
        firstStatus ??= answer.status;
        if (answer.status >= 200 && answer.status < 300) return answer.body;
        if (index > 0) refuseEndAfterFirst(answer.status, index, plan, since !== undefined, () => pageUrl(query));
        // A page answered with a status the mission allows but that is not 2xx (`allow: [404]`)
        // holds no records: its error body's list (`{ errors: [...] }`) was stored as records.
        // As an empty page, it ends the pagination.
        return null;
      },
      warn: (message) => rt.progress(`warning: ${path}: ${message}`),
      linkedNext: (index) => linkedNext.get(index),
      headerTotal: (index) => headerTotals.get(index),
      pageEndRules: rt.http.logFormat >= PAGE_END_RULES_FORMAT,
      signalForms: rt.http.logFormat >= PAGE_SIGNAL_FORMS_FORMAT,
      describe: pageUrl,
      ...(until
        ? {
            until: (pageBody: unknown) => isTruthy(evaluate(until, { ...ctx, response: pageBody })),
            ...(rt.http.logFormat >= WAIT_AND_UNTIL_RULES_FORMAT
              ? { untilEndsEarly: (pageBody: unknown, index: number, records: number) => refuseCountOfPageObject(until, { ...ctx, response: pageBody }, index, records, envelopeField(pageBody, plan.itemsPath)) }
              : {}),
          }
        : {}),
      onPage: async (page) => {
        // A page holding no items (`[]`, `{}`, the end marker `until` stops on, an allowed 404
        // past the last page) does not overrule the field the pages before it named: they decide
        // what `response.<field>` is.
        if (page.items.length > 0 || itemsField === undefined) {
          const field = envelopeField(page.body, plan.itemsPath);
          itemsField = itemsField === undefined || itemsField === field ? field : null;
        }
        if (options.backfill) {
          rt.journal.mark(path, 'page.completed', () => ({
            effectId: pageIds[page.index] ?? pageEffectId(path, page.index, rt),
            page: page.index + 1,
            ...(page.cursor !== undefined ? { cursor: page.cursor } : {}),
            records: page.items.length,
            done: page.done,
          }));
        }
        if (sink) {
          await sink.store(page.items, streamed);
          streamed += page.items.length;
          if (page.index % 10 === 9) rt.progress(`${path}: ${page.index + 1} page(s), ${streamed} record(s) stored so far`);
        }
      },
      collect: sink === undefined,
    }, {
      index: finished.pages,
      pagesBefore: finished.pages,
      itemsBefore: finished.items,
      ...(finished.lastAnswer !== undefined ? { previousBody: finished.lastAnswer.payload.response.body } : {}),
      ...(finished.listAnswer !== undefined ? { listBody: finished.listAnswer.payload.response.body } : {}),
    });
    status = firstStatus ?? status;
    pages = finished.pages + result.pages;
    truncated = result.truncated;
    recordsInDoubt = result.recordsElsewhere;
    itemCount = finished.items + result.count;
    // Streamed: the pages are stored already, and nothing after the store reads `response`.
    value = sink ? undefined : typeof itemsField === 'string' ? withItemsField(result.items, itemsField) : result.items;
    rt.progress(`${path}: ${pages} page(s), ${itemCount} record(s)${result.truncated ? ` (${describeTruncation(result.stoppedBy, options, since !== undefined)})` : ''}`);
  } else {
    if (sink) throw new Error(`internal: only a paginated fetch streams (${path})`);
    const answer = await fetchPage([], 0);
    status = answer.status;
    // A since fetch answered 2xx with an in-band error and no list (`{ "ok": false, "error":
    // "ratelimited" }`) holds no records: the mission may handle it (`match response { { error: _ }
    // -> jump Refresh then retry }`), but its checkpoint must not advance — a mission filtering it
    // (`response.items where …`) or skipping it completed, its checkpoint past records never read.
    const signalForms = rt.http.logFormat >= PAGE_SIGNAL_FORMS_FORMAT;
    inBandError = since && status >= 200 && status < 300 ? errorFieldOf(answer.body, options.itemsPath?.value, signalForms) : undefined;
    // Format 9: a since fetch without `paginate` whose answer says it is one page of several
    // (`has_more: true`, a next link, a Link header, `total_count` above what it holds) holds
    // back its checkpoint: advanced, the next run asked from past the records never read.
    if (since && inBandError === undefined && status >= 200 && status < 300 && rt.http.logFormat >= PAGE_END_RULES_FORMAT) {
      const says = { linkedNext: linkHeaderNext(answer.headers['link']), headerTotal: totalCountHeader(answer.headers), pageEndRules: true, signalForms };
      moreFollow = saysMore(answer.body, says) ?? countedMore(answer.body, recordsHeld(answer.body, options.itemsPath?.value), says);
    }
    // Nothing changed since the checkpoint (304), or nothing to send (204, an empty body): no
    // records (`store response -> S` stores none, a `for` over it runs no iteration).
    // A GET's too, since or none (LANGUAGE.md: a 204/empty body is an empty response, not a
    // failure): `store response -> S` failed on its null. A write's empty answer stays null.
    // (A 204 was `null` in runs recorded before log format 4, a plain GET's before 7: kept for them,
    // or their replay diverges.)
    const emptyAnswer = status >= 200 && status < 300 && answer.body === null;
    // A GET's JSON `null` (Firebase's "no data") is null, not an empty list: only no body at all is.
    const emptyList =
      (since && (status === NOT_MODIFIED || (emptyAnswer && rt.http.logFormat >= EMPTY_SINCE_ANSWER_FORMAT))) ||
      (method.toUpperCase() === 'GET' && emptyAnswer && answer.empty === true && rt.http.logFormat >= EMPTY_READ_ANSWER_FORMAT);
    value = emptyList ? [] : answer.body;
    valueInAnswer = value === answer.body;
    if (Array.isArray(value)) itemCount = value.length;
  }

  frame.response = value;
  frame.lastStatus = status;
  const firstEffect = pageIds[0] ?? pageEffectId(path, 0, rt);
  const completed = (): EventPayloads['fetch.completed'] => ({
    effectId: firstEffect,
    pages,
    ...(itemCount !== undefined ? { items: itemCount } : {}),
    ...(truncated ? { truncated } : {}),
    status,
    ...(options.paginate ? {} : valueInAnswer ? { valueInAnswer } : { value }),
  });
  const recordedCompletion = rt.journal.take(path, 'fetch.completed');
  if (recordedCompletion === undefined) rt.journal.emit('fetch.completed', path, completed());
  else if (rt.journal.verifying) assertSameCompletion(recordedCompletion, completed(), value, options.paginate !== undefined, path, rt);
  if (inBandError !== undefined) {
    rt.progress(`${path}: the answer holds an error under "${inBandError}" and no list: its since checkpoint does not advance, so the next run asks from where it was`);
  } else if (moreFollow !== undefined) {
    rt.progress(
      `warning: ${path}: the answer says more records follow (${moreFollow}), but the fetch has no paginate: its since checkpoint does not advance, so the next run asks from where it was. ` +
        `Add paginate (page, offset or cursor, as the API pages) to fetch them all`,
    );
  } else if (since && recordsInDoubt !== undefined) {
    rt.progress(`${path}: its records may be in "${recordsInDoubt}" (see the warning): its since checkpoint does not advance until itemsPath says where they are, so the next run asks from where it was`);
  } else if (since && !truncated && status >= 200 && status < 300) {
    // The server's instant, but never later than the fetch's start: a record dated in the future
    // (a local time labelled UTC, a 9999-12-31 placeholder) skipped every change before it.
    const served = since.updateFrom ? extractUpdateFrom(value, since.updateFrom) : undefined;
    if (since.updateFrom !== undefined && served === undefined && !isEmptyAnswer(value)) {
      // Said, as a misspelt cursorPath is: the server's clock was asked for and not found.
      rt.progress(
        `warning: ${path}: updateFrom "${since.updateFrom}" names no instant in the answer, so the checkpoint takes the fetch's start instead` +
          (options.paginate ? ` (a paginated fetch's answer is the list of every page's records: "[-1].updated_at" reads the last one's)` : ''),
      );
    }
    const syncedAt = served === undefined ? since.startedAt : Math.min(served, since.startedAt);
    frame.checkpoints.push({ key: since.key, syncedAt, ...(since.api !== undefined ? { api: since.api } : {}), ...(since.ownQuery !== undefined ? { query: since.ownQuery.shown, querySha256: since.ownQuery.sha256 } : {}) });
  }
  return {};
}

/**
 * Verify reached a fetch's recorded completion: it must say what the recorded answers give — the
 * status, the pages and records, and the value the run went on with (what the studio shows as the
 * step's response). Its effect id names the fetch's first request, except in a fork, whose older
 * engines named it by where the walk stood.
 */
function assertSameCompletion(recorded: StoredEvent<'fetch.completed'>, now: EventPayloads['fetch.completed'], value: unknown, paginated: boolean, path: string, rt: StepRuntime): void {
  const was = recorded.payload;
  const differs =
    was.status !== now.status ? `its status ${was.status} (the answers give ${now.status})`
    : was.pages !== now.pages ? `its ${was.pages} page(s) (the answers give ${now.pages})`
    : was.items !== undefined && was.items !== now.items ? `its ${was.items} record count (the answers give ${now.items ?? 'none'})`
    : (was.truncated === true) !== (now.truncated === true) ? `whether it was cut short (${was.truncated === true}, the answers give ${now.truncated === true})`
    : !rt.journal.holdsOtherRunsEffects && was.effectId !== now.effectId ? `its effect id ${was.effectId} (its first request's is ${now.effectId})`
    : was.valueInAnswer === true ? (now.valueInAnswer === true ? undefined : 'its value (recorded as the answer\'s body, which the answers do not give)')
    : !paginated && Object.hasOwn(was, 'value') && canonicalJson(was.value) !== canonicalJson(value) ? 'its value (not what the answers give)'
    : undefined;
  if (differs === undefined) return;
  throw new NondeterminismError(rt.runId, path, recorded.seq, `the fetch's completion with ${differs}`, 'the completion its recorded answers give', {
    change: `the recorded fetch.completed disagrees with the recorded answers in ${differs}`,
  });
}

/**
 * A page's effect id. In a fork recorded by an engine that named effects in concurrent branches
 * by where the walk stood (Journal.effectIdsInterleaved), the page's recorded request may carry
 * another id than the one derived now: it is taken as recorded, and counted as not checked.
 */
function pageEffectId(path: string, index: number, rt: StepRuntime): string {
  const id = effectId(rt.journal.identityRunId(path), path, 'http', index);
  if (!rt.journal.effectIdsInterleaved) return id;
  const next = rt.journal.peek(path);
  if (next?.type !== 'http.request') return id;
  const recorded = (next as StoredEvent<'http.request'>).payload.effectId;
  return rt.journal.takesEffectId(recorded, id) ? recorded : id;
}

/**
 * A source's `proxy: [env("P1"), …]` (upstream's fpl-sharded example): requests are not sent
 * through proxies yet. With every entry unset the source sends directly, as upstream's example
 * says it may; with any set, the request fails rather than leave from this host's own address,
 * which is what a proxy pool is there to avoid. The message names no proxy URL (it may hold a
 * password).
 */
function refuseProxies(source: { name: { name: string }; proxy?: readonly Expr[] }, ctx: EvalContext): void {
  const pool = source.proxy ?? [];
  if (pool.length === 0) return;
  const set = pool.filter((e) => {
    const v = evaluate(e, ctx);
    return v !== null && v !== undefined && v !== '';
  }).length;
  if (set === 0) return;
  throw new StepError(
    'proxy-unsupported',
    `source "${source.name.name}" sets ${set} of its ${pool.length} proxies: sending through proxies is not supported yet, and sending directly instead would leave from this host's own address; unset them to send directly`,
  );
}

/**
 * `params: { limit: 100, status: "active" }` appended to the path's query, in the object's order:
 * a null or absent value sends nothing, an array repeats the parameter, an object is refused.
 */
function withParams(requestPath: string, params: unknown): string {
  if (params === null || params === undefined) return requestPath;
  if (typeof params !== 'object' || Array.isArray(params)) {
    throw new StepError('params', `\`params\` must be an object of query parameters, got ${describeValue(params)}`);
  }
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(params as Record<string, unknown>)) {
    for (const v of Array.isArray(value) ? value : [value]) {
      if (v === null || v === undefined) continue;
      if (typeof v === 'object') throw new StepError('params', `query parameter "${name}" must be a string, number or boolean, got ${describeValue(v)}`);
      refuseLostDigits(v, `query parameter "${name}"`, 'params');
      query.append(name, String(v));
    }
  }
  const qs = query.toString();
  if (qs === '') return requestPath;
  return requestPath + (requestPath.includes('?') ? '&' : '?') + qs;
}

/** A request's `headers: { … }`: an object of strings, numbers or booleans; a null value sends none. */
function headersOf(value: unknown): Record<string, string> {
  if (value === null || value === undefined) return {};
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw new StepError('headers', `\`headers\` must be an object of header values, got ${describeValue(value)}`);
  }
  const out: Record<string, string> = {};
  for (const [name, v] of Object.entries(value as Record<string, unknown>)) {
    if (v === null || v === undefined) continue;
    if (typeof v === 'object') throw new StepError('headers', `header "${name}" must be a string, number or boolean, got ${describeValue(v)}`);
    refuseLostDigits(v, `header "${name}"`, 'headers');
    out[name] = String(v);
  }
  return out;
}

/**
 * A query parameter or header value that is an integer beyond 2^53 is never sent: it names
 * another record than the one it came from, as a path placeholder would (path-template.ts).
 */
function refuseLostDigits(value: unknown, what: string, code: 'params' | 'headers'): void {
  if (!lostDigits(value)) return;
  throw new StepError(code, `${what} is not sent: ${lostDigitsText(value)}, so the request would name another record; use the API's string form of the value (an \`id_str\`, or the record's field as a string)`);
}

const HEADER_VARIABLE = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/**
 * `headers: { "X-Shopify-Access-Token": "${SHOPIFY_TOKEN}" }` (upstream's reconciliation example):
 * each `${NAME}` in a source header's string is the run's setting NAME (`reqon run … --env
 * NAME=…`), as `env("NAME")` would read it. A name the run does not set fails the request, naming
 * the header and the setting; before, the text was sent as it stood.
 */
function headerVariables(text: string, header: string, source: string, rt: StepRuntime): string {
  return text.replace(HEADER_VARIABLE, (_match, name: string) => {
    const value = rt.envVar(name);
    if (value === undefined) {
      throw new StepError(
        'header-variable',
        `header "${header}" of source "${source}" reads \${${name}}, which this run does not set: run with \`--env ${name}=…\` (or write env("${name}") in the mission)`,
      );
    }
    return value;
  });
}

/**
 * The request's identity (journal/request-identity.ts): the URL as sent without auth query
 * parameters, redacted; the body and the mission's headers hashed after redaction, so no secret's
 * hash reaches the log (and a rotated credential in a header changes nothing). `redactor`: the
 * run's own, or HttpRuntime.redactorBefore5 to recognise an identity an engine before log format
 * 5 computed.
 */
function identityOf(spec: RequestSpec, rt: StepRuntime, redactor: Redactor = rt.http.redactor): RequestIdentity {
  const query = [...(spec.sinceQuery ?? []), ...(spec.pageQuery ?? [])];
  const unredacted = buildUrl(spec.base, spec.path, query);
  const url = redactor.url(unredacted);
  const method = spec.method.toUpperCase();
  const headersSha256 = hash('sha256', canonicalJson(missionHeaders(spec, redactor)), 'hex');
  const namedValues = namedValuesSha256(unredacted, mergeHeaders(spec.sourceHeaders, spec.sinceHeaders), settingsHider(rt, redactor), rt.http.credentialNames);
  const source = spec.source;
  if (spec.body === undefined) return { method, url, headersSha256, source, namedValuesSha256: namedValues };
  return { method, url, bodySha256: hash('sha256', canonicalJson(redactor.value(spec.body)), 'hex'), headersSha256, source, namedValuesSha256: namedValues };
}

const settingsOfRun = new WeakMap<StepRuntime, { long: Redactor; short: ReadonlySet<string> }>();

/**
 * Takes the run's settings (every `env()` value) and known secrets out of a credential-named
 * value before it is hashed into the identity: long ones wherever they appear, short ones as the
 * whole value (as the redactor does), so a rotated key hashes the same.
 */
function settingsHider(rt: StepRuntime, redactor: Redactor): (value: string) => string {
  let settings = settingsOfRun.get(rt);
  if (settings === undefined) {
    const values = rt.envValues();
    settings = { long: createRedactor(values.filter((v) => v.length >= MIN_SECRET_LENGTH)), short: new Set(values.filter((v) => v.length < MIN_SECRET_LENGTH)) };
    settingsOfRun.set(rt, settings);
  }
  const { long, short } = settings;
  return (value) => {
    const text = redactor.text(long.text(value));
    return short.has(text) || short.has(decodedOrSelf(text)) ? REDACTED : text;
  };
}

function decodedOrSelf(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return text;
  }
}

/** The headers the mission sets (source, then since, as the request builder merges them), redacted, names lower-cased. */
function missionHeaders(spec: RequestSpec, redactor: Redactor): Record<string, string> {
  const redacted = redactor.headers(mergeHeaders(spec.sourceHeaders, spec.sinceHeaders));
  const out: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const name of Object.keys(redacted)) out[name.toLowerCase()] = redacted[name]!;
  return out;
}

/**
 * Replay reached a recorded attempt of this effect: the mission must still ask for the same
 * request. Logs recorded before request identities (format 1) are checked by method alone.
 */
function assertSameRequest(recorded: StoredEvent<'http.request'>, spec: RequestSpec, asked: RequestIdentity, path: string, rt: StepRuntime, line: () => number): void {
  const was = recorded.payload.identity;
  if (was ? sameRequest(was, asked) || sameRequestBefore5(was, spec, rt) : recorded.payload.request.method === asked.method) {
    // Verify answers for the log as every view shows it: a copy that shows another request than
    // the identity it compared is no match (resume sends from the mission, never from the copy).
    const disagrees = rt.journal.verifying ? loggedCopyDisagrees(recorded.payload, spec, rt) : undefined;
    if (disagrees === undefined) return;
    throw new DamagedLogError(
      rt.runId,
      `the request at seq ${recorded.seq} (${path}) shows ${recorded.payload.request.method} ${recorded.payload.request.url}, whose copy disagrees with the identity recorded beside it in ${disagrees} (edited outside the engine)`,
      recorded.seq,
    );
  }
  const before: RequestIdentity = was ?? { method: recorded.payload.request.method, url: recorded.payload.request.url };
  let [shownBefore, shownAsked] = [describeRequest(before), describeRequest(asked)];
  // Method, URL and body alike: what differs is in the headers, the source or a credential-named value.
  if (shownBefore === shownAsked) [shownBefore, shownAsked] = [`${shownBefore} ${identityTail(before)}`, `${shownAsked} ${identityTail(asked)}`];
  throw new NondeterminismError(
    rt.runId,
    path,
    recorded.seq,
    `the request ${shownBefore}`,
    `the request ${shownAsked}`,
    { line: line(), change: describeRequestChange(before, asked) },
  );
}

/**
 * A log of format 4 or older: its engine computed a request's identity before it knew the
 * credentials of the request's source (HttpRuntime.redactorBefore5), so a credential the mission
 * put in a value of no credential name could stand in it unredacted. Such an identity is the
 * same request.
 */
function sameRequestBefore5(was: RequestIdentity, spec: RequestSpec, rt: StepRuntime): boolean {
  return rt.http.logFormat < 5 && sameRequest(was, identityOf(spec, rt, rt.http.redactorBefore5));
}

/**
 * Where a logged request's copy (`request`: what `reqon events` and the studio show as sent)
 * disagrees with the identity recorded beside it, or undefined when it agrees. The engine writes
 * both from one request, so a disagreement means the log was edited outside it: verify compares
 * the identity, and must not pass a copy that shows another request. Compared: the method, the
 * URL (the copy may hold more query parameters, the auth ones the identity leaves out, each shown
 * as [REDACTED]), the body, and the Idempotency-Key (the effect's id, GUARANTEES 6).
 */
function loggedCopyDisagrees(payload: EventPayloads['http.request'], spec: RequestSpec, rt: StepRuntime): string | undefined {
  const { request, identity } = payload;
  if (identity === undefined) return undefined;
  if (request.method.toUpperCase() !== identity.method) return `its method (${request.method}, its identity ${identity.method})`;
  // Both as the run's redactor shows them: before format 5 an identity could hold a credential
  // its copy (redacted once the source's credentials were known) shows as [REDACTED].
  const redactor = rt.http.redactor;
  if (!urlCovers(request.url, redactor.url(request.url), redactor.url(identity.url), rt.http.source(spec.source).auth?.kind === 'api_key')) {
    return `its URL (${request.url}, its identity ${identity.url})`;
  }
  const bodySha256 = request.body === undefined ? undefined : hash('sha256', canonicalJson(request.body), 'hex');
  if (bodySha256 !== identity.bodySha256 && !(rt.http.logFormat < 5 && bodySha256 !== undefined && isRedactedBody(bodySha256, spec, rt))) {
    return `its body (sha256 ${bodySha256?.slice(0, 12) ?? 'none'}, its identity ${identity.bodySha256?.slice(0, 12) ?? 'none'})`;
  }
  // A read carries no key of the engine's: an Idempotency-Key header on one is the mission's (in
  // the identity's headers sha256). The engine sends every write under its effect's id, in one
  // header, and records it beside.
  if (!MUTATING.has(identity.method)) return payload.idempotencyKey === undefined ? undefined : `its Idempotency-Key (${payload.idempotencyKey}, recorded on a ${identity.method})`;
  const keys = Object.entries(request.headers).filter(([name]) => name.toLowerCase() === 'idempotency-key').map(([, value]) => value);
  if (payload.idempotencyKey !== payload.effectId) return `its Idempotency-Key (${payload.idempotencyKey ?? 'none'}, which is its effect's id ${payload.effectId})`;
  if (keys.length !== 1 || keys[0] !== payload.idempotencyKey) return `its Idempotency-Key header (${keys.join(', ') || 'none'}, recorded ${payload.idempotencyKey})`;
  return undefined;
}

/**
 * Before format 5 a body's identity could be hashed before the credentials it held were known,
 * so its redacted copy does not hash to it: the copy must then be the body the mission asks for
 * (whose identity matched), redacted as the log holds it.
 */
function isRedactedBody(copySha256: string, spec: RequestSpec, rt: StepRuntime): boolean {
  if (spec.body === undefined) return false;
  return [rt.http.redactor, rt.http.redactorBefore5].some((redactor) => hash('sha256', canonicalJson(redactor.value(spec.body)), 'hex') === copySha256);
}

/**
 * `shown` (the copy, as logged) is `identity`'s URL but for the query parameter an `auth: api_key`
 * source's credentials append (`authInQuery`), which the identity leaves out and the copy shows as
 * [REDACTED] — after any value of that name the request had already. Decided by the mission's
 * declaration, not by the credentials readable now (an --auth file edited since the run). The
 * parameters the identity names are compared as the run's redactor shows them (`shownRedacted`,
 * `identity`): before format 5 either could hold a credential the other hides.
 */
function urlCovers(shown: string, shownRedacted: string, identity: string, authInQuery: boolean): boolean {
  if (shownRedacted === identity && shown === shownRedacted) return true;
  let raw: URL;
  let a: URL;
  let b: URL;
  try {
    [raw, a, b] = [new URL(shown), new URL(shownRedacted), new URL(identity)];
  } catch {
    return false;
  }
  if (a.origin !== b.origin || a.pathname !== b.pathname || a.hash !== b.hash) return false;
  for (const name of new Set([...a.searchParams.keys(), ...b.searchParams.keys()])) {
    const [shownValues, rawValues, identityValues] = [a.searchParams.getAll(name), raw.searchParams.getAll(name), b.searchParams.getAll(name)];
    if (shownValues.length < identityValues.length || identityValues.some((v, i) => shownValues[i] !== v)) return false;
    const extra = rawValues.slice(identityValues.length);
    if (extra.length > 0 && (!authInQuery || extra.some((v) => v !== REDACTED))) return false;
  }
  return true;
}

/** The parts of an identity `describeRequest` leaves out, for two requests it shows alike. */
function identityTail(r: RequestIdentity): string {
  const sha = (v: string | undefined) => (v ? v.slice(0, 12) : 'none');
  return `[headers sha256 ${sha(r.headersSha256)}, source ${r.source ?? 'unrecorded'}, credential-named values sha256 ${sha(r.namedValuesSha256)}]`;
}

/**
 * Replay reached a recorded answer: the mission's retry and `allow` settings must still take it as
 * they did (an answer, a retry, a failure). An edit to `maxAttempts` or `allow` that would have
 * failed on an answer the run retried, or taken one it retried as final, changes what the run did
 * after it: answering with the recorded outcome would be a lie. A 401 answered by a refresh of
 * credentials is classified as one the session could refresh (whether it can is the session's, not
 * the mission's); a 2xx recorded as failed had a body that was not JSON, which no setting changes.
 * Transport failures no setting retries (too large, aborted) are taken as they were.
 */
function assertSameVerdict(
  spec: RequestSpec,
  intent: StoredEvent<'http.request'>,
  outcome: StoredEvent<'http.response' | 'http.error'>,
  attempt: number,
  refreshes: number,
  path: string,
  rt: StepRuntime,
  line: () => number,
): void {
  const recorded = outcome.payload.verdict;
  if (outcome.type === 'http.error') {
    const code = (outcome as StoredEvent<'http.error'>).payload.error.code;
    if (code !== 'timeout' && code !== 'network') return;
  }
  const attemptOutcome = recordedOutcome(outcome);
  const now = classifyRecorded(spec, intent, outcome, attempt, refreshes).kind;
  if (now === recorded) return;
  if (recorded === 'fail' && now === 'success') return; // a 2xx whose body was refused
  const what = attemptOutcome.kind === 'response' ? `${attemptOutcome.status}` : `a ${attemptOutcome.code === 'timeout' ? 'timeout' : 'network error'}`;
  const taken = (v: string) =>
    v === 'retry' ? 'retried' : v === 'fail' ? 'a failure' : v === 'allowed' ? 'an allowed answer' : v === 'refresh-auth' ? 'a credential refresh' : 'its answer';
  throw new NondeterminismError(
    rt.runId,
    path,
    outcome.seq,
    `attempt ${attempt}'s ${what}, taken as ${taken(recorded)}`,
    `the same ${what} taken as ${taken(now)}`,
    {
      line: line(),
      change: `the retry or allow settings of ${spec.method.toUpperCase()} ${pathOf(intent.payload.request.url)} changed: attempt ${attempt}'s ${what} was taken as ${taken(recorded)}, and would now be ${taken(now)}`,
    },
  );
}

/**
 * A path computed from data (`"/users/" + u.id`, `concat("/users/", u.id, "/orders")`) with a
 * field that is null or absent, or empty where it fills a whole segment: `+` makes it "", so
 * `DELETE /users/` + a record without an id deleted the collection, and `/users//orders` named
 * another resource (probe 110 K9). Refused as a `{placeholder}` refuses such a value, R4010,
 * before anything is sent (log format 10). Only the parts that read data (a name, a field) are
 * looked at: they evaluate again without side effects, where a call (`generateId()`, `now()`)
 * would count or record twice; an empty part elsewhere than a whole segment (a query suffix that
 * is "" on purpose) is data.
 */
function refuseEmptyPathParts(path: Expr, computed: string, ctx: EvalContext, line: () => number): void {
  const parts: Expr[] = [];
  const collect = (e: Expr): void => {
    if (e.kind === 'Binary' && e.operator === '+') {
      collect(e.left);
      collect(e.right);
    } else if (e.kind === 'Call' && e.callee.name === 'concat') {
      for (const arg of e.args) collect(arg);
    } else parts.push(e);
  };
  collect(path);
  if (parts.length < 2) return;
  const literal = (e: Expr | undefined): string | undefined => (e?.kind === 'String' ? e.value : undefined);
  parts.forEach((part, i) => {
    if (part.kind !== 'Ref' && part.kind !== 'Member') return;
    const value = evaluate(part, ctx);
    const missing = value === null || value === undefined;
    // "" fills a whole segment where the text before it ends a segment and the text after it (if any) starts one.
    const before = literal(parts[i - 1]);
    const after = i + 1 < parts.length ? literal(parts[i + 1]) : '';
    const wholeSegment = value === '' && before?.endsWith('/') === true && (after === '' || after?.startsWith('/') === true || after?.startsWith('?') === true);
    if (!missing && !wholeSegment) return;
    throw new EvaluatorError(
      'R4010',
      `The request path \`${computed}\` (line ${line()}) was computed with a part that is ${value === '' ? 'empty' : value === null ? 'null' : 'absent'}: ` +
        `the path names another resource than the one written (\`/users/\` + no id is the collection). Skip such records (\`where\`), or write the path with \`{placeholder}\`s, which refuse such values`,
      { start: part.start, end: part.end },
    );
  });
}

/** What the mission's retry and `allow` settings make of a recorded attempt, as the live attempt was classified. */
function classifyRecorded(spec: RequestSpec, intent: StoredEvent<'http.request'>, outcome: StoredEvent<'http.response' | 'http.error'>, attempt: number, refreshes: number): Decision {
  const policy = policyOf(spec.retry);
  return classifyAttempt({
    method: spec.method,
    outcome: recordedOutcome(outcome),
    attempt,
    policy: refreshes > 0 ? { ...policy, maxAttempts: policy.maxAttempts + refreshes } : policy,
    allow: spec.allow ?? [],
    hasIdempotencyKey: intent.payload.idempotencyKey !== undefined || Object.keys(intent.payload.request.headers).some((h) => h.toLowerCase() === 'idempotency-key'),
    canRefresh: outcome.payload.verdict === 'refresh-auth',
    now: outcome.recordedAt,
    random01: 0,
  });
}

/** Tells the source's rate limiter what a recorded answer told it, at the instant it was recorded. */
function observeRecorded(rt: StepRuntime, spec: Pick<RequestSpec, 'source' | 'path' | 'rateLimit'>, answer: StoredEvent<'http.response'>): void {
  const { response } = answer.payload;
  rt.http.limiter.observe(limiterKeyOf(spec), response.status, response.headers ?? {}, spec.rateLimit, answer.recordedAt);
}

/** A recorded attempt's outcome as the retry rules and the breaker saw it live. */
function recordedOutcome(outcome: StoredEvent<'http.response' | 'http.error'>): AttemptOutcome {
  if (outcome.type === 'http.response') {
    const response = (outcome as StoredEvent<'http.response'>).payload.response;
    return { kind: 'response', status: response.status, headers: response.headers ?? {} };
  }
  // What the breaker and the retry rules tell apart: a timeout, an abort, any other failure to answer.
  const code = (outcome as StoredEvent<'http.error'>).payload.error.code;
  return { kind: 'transport', code: code === 'aborted' || code === 'timeout' ? code : 'network', message: '' };
}

/** One page: the recorded attempts on replay, then (if needed) live attempts with the same key. */
async function answerPage(spec: RequestSpec, id: string, path: string, mutating: boolean, rt: StepRuntime, line: () => number): Promise<PageAnswer> {
  const turn = rt.crash.turn('request', path);
  if (turn) await turn;
  const identity = identityOf(spec, rt);
  // A mutating request is external: its intent is durable before it is sent (GUARANTEES 4).
  const effect = new Effect(rt.journal, rt.crash, { kind: 'request', key: id, path, external: mutating });
  const ofThisPage = (e: StoredEvent<'http.request' | 'http.response' | 'http.error'>): boolean => e.payload.effectId === id;
  let attempts = 0;
  let refreshes = 0;
  /** When the last replayed attempt was to be retried: the instant its delay (backoff, Retry-After) ends. */
  let retryDueAt: number | undefined;
  const breaker = rt.http.breaker;
  const endpoint = endpointOf(spec.path);
  for (;;) {
    const intent = effect.takeIntent('http.request', ofThisPage, (recorded) => assertSameRequest(recorded, spec, identity, path, rt, line));
    if (!intent) break;
    attempts++;
    retryDueAt = undefined;
    // The breaker is told of each replayed attempt at the instant it was made, so it stands
    // after the replay where it stood then (it admitted every one of them: a refusal sends nothing).
    try {
      breaker.admit(spec.source, endpoint, spec.circuitBreaker, intent.recordedAt);
    } catch {
      // A breaker whose settings an edit changed: what it says of the past is no longer the log's.
    }
    // A replayed pass counts towards --crash-at POINT:N (whole-run counting) but never kills.
    effect.pass('before-effect', false);
    const outcome = effect.takeOutcome(['http.response', 'http.error'], ofThisPage);
    if (!outcome) {
      // The process died in flight: the attempt is made again, live, with the same key and the
      // same number (its answer is the one a run without the crash would have had).
      breaker.recordNeutral(spec.source, endpoint);
      attempts--;
      continue;
    }
    tellBreaker(breaker, spec, recordedOutcome(outcome), outcome.recordedAt);
    // The rate limiter too: the window, remaining count and Retry-After each answer told it.
    if (outcome.type === 'http.response') observeRecorded(rt, spec, outcome as StoredEvent<'http.response'>);
    effect.pass('after-effect', false);
    assertSameVerdict(spec, intent, outcome, attempts, refreshes, path, rt, line);
    if (outcome.payload.verdict === 'refresh-auth') refreshes++;
    if (outcome.payload.verdict === 'retry') retryDueAt = outcome.recordedAt + (outcome.payload.retryInMs ?? 0);
    // A recorded failure, replayed where the log holds no step failure after it (a crash between
    // the two, a fork cut there): its message from what the log holds — the request's redacted
    // copy, the recorded answer — never the mission's unredacted URL; its code and retryable the
    // live failure's (probe 106 K4: every one became `fetch-failed`, not retryable).
    if (outcome.type === 'http.response') {
      const { payload } = outcome;
      if (payload.verdict === 'success' || payload.verdict === 'allowed') return { status: payload.response.status, body: payload.response.body, headers: payload.response.headers ?? {}, ...(payload.response.empty ? { empty: true as const } : {}) };
      if (payload.verdict === 'fail') {
        const answered = answerExcerpt(payload.response.body);
        // Its code and retryable as the live attempt's: the status rules, or a 2xx whose body was refused.
        const decision = classifyRecorded(spec, intent, outcome, attempts, refreshes);
        const failure = decision.kind === 'fail' ? decision : { code: 'invalid-body', retryable: false };
        throw new StepError(
          failure.code,
          failureMessage(intent.payload.request.method, intent.payload.request.url, `failed with ${payload.response.status}`, attempts) + (answered !== undefined ? `; the API answered: ${answered}` : ''),
          failure.retryable,
        );
      }
    } else if (outcome.type === 'http.error' && outcome.payload.verdict === 'fail') {
      // The failure as the live attempt had it (redacted as the log holds it).
      const { code, message, retryable } = outcome.payload.error;
      throw new StepError(code, message, retryable === true);
    }
    // A retry was due: the next recorded attempt, or live.
  }

  // An attempt the circuit breaker refused (recorded where its request would be): refused again.
  const refused = effect.takeOutcome(['http.error'], (e) => ofThisPage(e) && e.payload.error.code === 'circuit-open');
  if (refused) throw new StepError('circuit-open', refused.payload.error.message, true);
  // Logged before refusals were (the step's failure stands where the refusal would be): the same.
  const failed = rt.journal.replaying ? rt.journal.peek(path) : undefined;
  if (failed?.type === 'step.failed' && (failed as StoredEvent<'step.failed'>).payload.error.code === 'circuit-open') {
    throw new StepError('circuit-open', (failed as StoredEvent<'step.failed'>).payload.error.message, true);
  }

  // Past the recorded attempts: under verify, the log's end (or a divergence) here, before any wait.
  rt.journal.verifyGoingLive(path, 'http.request');
  // Killed while it waited to retry: the rest of the wait is waited out, as the run without the
  // crash would have (a Retry-After the API set still holds).
  if (retryDueAt !== undefined && !rt.journal.verifying) {
    const rest = retryDueAt - rt.env.clock.now();
    if (rest > 0) await rt.env.clock.sleep(rest);
  }

  const result = await executeRequest(
    spec,
    { env: rt.env, auth: rt.http.auth(rt.http.source(spec.source)), limiter: rt.http.limiter, breaker: rt.http.breaker, redactor: rt.http.redactor },
    {
      beforeAttempt: async ({ attempt, request }) => {
        await effect.recordIntent('http.request', {
          effectId: id,
          attempt,
          request,
          ...(spec.idempotencyKey ? { idempotencyKey: spec.idempotencyKey } : {}),
          identity,
        });
        effect.pass('before-effect', true);
      },
      refused: ({ attempt, message }) =>
        effect.recordOutcome('http.error', { effectId: id, attempt, error: { code: 'circuit-open', message, retryable: true }, durationMs: 0, verdict: 'fail' }),
      afterAttempt: ({ attempt, response, error, verdict, retryInMs, durationMs }) => {
        effect.pass('after-effect', true);
        const retry = retryInMs === undefined ? {} : { retryInMs };
        const recorded = response
          ? effect.recordOutcome('http.response', { effectId: id, attempt, response, durationMs, verdict, ...retry })
          : effect.recordOutcome('http.error', { effectId: id, attempt, error: error ?? { code: 'error', message: 'request failed' }, durationMs, verdict, ...retry });
        // An attempt to be retried is in the log before the wait: a crash during it resumes at the
        // next attempt, within the same budget (a mutating request's outcome is committed anyway).
        return recorded ?? (verdict === 'retry' ? rt.journal.commit({ durable: false }) : undefined);
      },
    },
    // The live attempts continue the replayed ones' count (GUARANTEES 4): one retry budget, crash or not.
    { attempts, refreshes },
  ).catch((error: unknown) => {
    throw error instanceof FetchError ? new StepError(error.code, error.message, error.retryable) : error;
  });
  if (result.decodeWarning !== undefined) rt.progress(`warning: ${path}: ${spec.method.toUpperCase()} ${pathOf(rt.http.redactor.url(buildUrl(spec.base, spec.path)))}: ${result.decodeWarning}`);
  return { status: result.status, body: result.body, headers: result.headers, ...(result.empty ? { empty: true as const } : {}) };
}


interface SinceParts {
  key: string;
  /** The API the checkpoint belongs to (HttpRuntime.checkpointApi). */
  api?: string;
  /** Of a bare lastSync: the request's own query (its path's `?…`), which the checkpoint records. */
  ownQuery?: OwnQuery;
  query: QueryParams;
  headers: Record<string, string>;
  startedAt: number;
  updateFrom?: string;
}

/** Per walk of a run: each bare lastSync's checkpoint key → the fetch (step, no iterations) and query that first used it. */
const checkpointUsers = new WeakMap<object, Map<string, { step: string; query: string }>>();

/**
 * A bare `lastSync` keys its checkpoint by source and path, without the query: two fetches of one
 * path with different queries (`params: { status: "open" }` and `{ status: "closed" }`) fetch
 * different records but shared one checkpoint, so the second read the one the first had just
 * advanced and never fetched its older records — a run that completed with them missing. Such a
 * second fetch fails instead, before it is sent, saying how to key each. So does the same fetch in
 * a loop asking with another query each time: a tenant the loop gains later, or one whose fetch
 * failed while the others advanced the shared checkpoint, would never get its older records; a key
 * per value (`lastSync(concat("orders:", a.id))`) or the value in the path keeps each its own.
 * Decided from the walk alone (the same on replay).
 */
function refuseSharedCheckpoint(key: string, requestPath: string, path: string, rt: StepRuntime): void {
  const cut = requestPath.search(/[?#]/);
  const query = queryOf(requestPath);
  // The step, whatever iteration, visit (`#n`, a jump back) or attempt (`~n`, a retry) runs it.
  const step = path.replace(/\[[^\]]*\]|#\d+|~\d+/g, '');
  let users = checkpointUsers.get(rt.journal);
  if (users === undefined) checkpointUsers.set(rt.journal, (users = new Map()));
  const first = users.get(key);
  if (first === undefined) {
    users.set(key, { step, query });
    return;
  }
  if (first.query === query) return;
  const shown = (q: string) => `${requestPath.slice(0, cut >= 0 ? cut : undefined)}${q}`;
  // One step asking for other records each time (a loop over accounts): a value added to the loop
  // later, or one whose fetch fails while the others advance the checkpoint, would start from it.
  if (first.step === step) {
    throw new StepError(
      'checkpoint-shared',
      `checkpoint "${key}" of since: lastSync is shared by every request of step ${step}, which asks for other records each time (${shown(first.query)}, then ${shown(query)}): ` +
        `a value the loop gains later, or one whose fetch fails while the others advance the checkpoint, would start from it and skip its own older records. ` +
        `Give each its own key, as lastSync(concat("${key}:", …the value that varies…)), or put the value in the path ("/accounts/{a.id}/orders" is one checkpoint per account)`,
    );
  }
  throw new StepError(
    'checkpoint-shared',
    `checkpoint "${key}" of since: lastSync is shared by ${shown(first.query)} (step ${first.step}) and ${shown(query)} (step ${step}): ` +
      `they fetch different records, and this one would start from the checkpoint the other advanced, skipping its own older records. ` +
      `Give each its own key: since: lastSync("…")`,
  );
}

/** An answer with nothing in it to read an instant from: null, [] or {}. */
function isEmptyAnswer(value: unknown): boolean {
  return value === null || value === undefined || (typeof value === 'object' && Object.keys(value).length === 0);
}

/** A request path's query, `?` included ('' for none): what tells apart two requests of one bare lastSync. */
function queryOf(requestPath: string): string {
  const cut = requestPath.search(/[?#]/);
  return cut >= 0 ? requestPath.slice(cut) : '';
}

/** A bare lastSync request's query: as the log shows it (redacted), and what is compared. */
interface OwnQuery {
  shown: string;
  /** sha256 of the query before redaction, normalised (normalQuery). */
  sha256: string;
}

/** A query as the server reads it: parameters decoded (`%41` is `A`, `+` a space), in sorted order. */
function normalQuery(query: string): string {
  return [...new URLSearchParams(query.replace(/^\?/, ''))].map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).sort().join('&');
}

/** Whether the checkpoint `mark` was advanced by a request asking as `own` does (unknown: yes). */
function sameQuery(mark: { query?: string; querySha256?: string }, own: OwnQuery): boolean {
  if (mark.querySha256 !== undefined) return mark.querySha256 === own.sha256;
  return mark.query === undefined || normalQuery(mark.query) === normalQuery(own.shown);
}

/**
 * A bare lastSync whose checkpoint an earlier run advanced with another query: said, not refused.
 * Within a run two queries of one checkpoint are refused (refuseSharedCheckpoint); across runs a
 * query may change for reasons that select no other records (an edited page size, a date the
 * mission computes), so the run goes on — but if they do fetch different records, this one
 * starts from the other's checkpoint and skips its own older ones, which must not pass unsaid.
 */
function warnCheckpointOfOtherQuery(key: string, requestPath: string, advancedBy: string, path: string, rt: StepRuntime): void {
  const shown = rt.http.redactor.url(requestPath);
  const bare = shown.slice(0, shown.length - queryOf(shown).length);
  rt.progress(
    `warning: ${path}: checkpoint "${key}" of since: lastSync was last advanced by ${bare}${advancedBy} (an earlier run); this request, ${shown}, starts from it` +
      `${normalQuery(advancedBy) === normalQuery(queryOf(shown)) ? ' (they differ in the value of a parameter redacted as a credential)' : ''}. ` +
      `If the two fetch different records, this one's records older than the checkpoint are skipped: give each its own key, since: lastSync("…")`,
  );
}

/** `lastSync(KEY)`: a string literal as written; an expression's value, which must be a non-empty string or a number. */
function explicitCheckpointKey(key: Expr, path: string, frame: Frame, rt: StepRuntime): string {
  if (key.kind === 'String') return key.value;
  const value = evaluate(key, evalContext(rt, frame, path));
  if ((typeof value === 'string' && value !== '') || (typeof value === 'number' && Number.isFinite(value))) return String(value);
  throw new StepError('since', `the checkpoint key of lastSync(…) must be a non-empty string, got ${describeValue(value)}`);
}

/** `since: lastSync(…) {…}` or `since: expr` (§C.1.6): the request parts and the checkpoint key. */
async function sinceParts(
  options: FetchOptions,
  source: string,
  which: CheckpointApi,
  requestPath: string,
  operationId: string | undefined,
  path: string,
  frame: Frame,
  rt: StepRuntime,
): Promise<SinceParts | undefined> {
  const since = options.since;
  if (!since) return undefined;
  const { api } = which;
  const startedAt = journaledInputs(rt, path).now();
  if (since.kind === 'SinceExpr') {
    const value = sinceExprValue(evaluate(since.value, evalContext(rt, frame, path)));
    return { key: checkpointKey({ source, operationId, path: requestPath }), ...(api !== undefined ? { api } : {}), ...sincePlacement({}, value), startedAt };
  }
  const key = checkpointKey({ explicitKey: since.key && explicitCheckpointKey(since.key, path, frame, rt), source, operationId, path: requestPath });
  // Redacted as the log holds every URL: a credential-named parameter's value never enters it.
  const ownQuery: OwnQuery | undefined =
    since.key === undefined ? { shown: queryOf(rt.http.redactor.url(requestPath)), sha256: hash('sha256', normalQuery(queryOf(requestPath)), 'hex') } : undefined;
  if (ownQuery !== undefined) refuseSharedCheckpoint(key, requestPath, path, rt);
  let last: number;
  const recorded = rt.journal.take(path, 'value.recorded');
  if (recorded) {
    // The fetch read another checkpoint when it ran (helper 78: an edited key verified where the
    // run held its checkpoint back, so no checkpoint.advanced named the key).
    const read = recorded.payload.key;
    if (read !== undefined && read !== key) {
      throw new NondeterminismError(rt.runId, path, recorded.seq, `checkpoint "${read}"`, `checkpoint "${key}"`, {
        change: `the checkpoint this fetch reads changed: "${read}" became "${key}", so it asks from another instant`,
      });
    }
    last = recorded.payload.value as number;
  } else {
    const mark = await lastCheckpointOf(key, which, (k, a) => rt.lastSync(k, a));
    last = mark?.syncedAt ?? 0;
    rt.journal.emit('value.recorded', path, { source: 'last-sync', value: last, key, ...(which.api !== undefined ? { api: which.api } : {}) });
    if (ownQuery !== undefined && mark !== undefined && !sameQuery(mark, ownQuery)) warnCheckpointOfOtherQuery(key, requestPath, mark.query ?? '?…', path, rt);
  }
  const formatted = formatLastSync(last, since.format ?? defaultSinceFormat(since.header));
  return {
    key,
    ...(api !== undefined ? { api } : {}),
    ...(ownQuery !== undefined ? { ownQuery } : {}),
    ...sincePlacement({ ...(since.param ? { param: since.param } : {}), ...(since.header ? { header: since.header } : {}) }, formatted),
    startedAt,
    ...(since.updateFrom ? { updateFrom: since.updateFrom } : {}),
  };
}

/**
 * A page after the first answered with a non-2xx status the fetch lets through, where that is no
 * end of the walk: a 304 to a since fetch said only that this page's URL is unchanged (a server
 * answers If-Modified-Since per URL: the pages after it may hold changes), and a status answered to
 * a page that a cursor named (`allow: [404]`) came after the API said more pages follow. Either
 * ended the walk as an empty page did, in a run that completed with the rest missing and its
 * checkpoint advanced past them. (An allowed 404 or 400 to a page number or offset past a full
 * page is how Django and others end a walk: still the end.)
 */
function refuseEndAfterFirst(status: number, index: number, plan: PaginationPlan, since: boolean, describe: () => string): void {
  const notModified = since && status === NOT_MODIFIED;
  if (!notModified && plan.strategy !== 'cursor') return;
  throw new PaginationError(
    notModified
      ? `page ${index + 1} (${describe()}) answered 304 Not Modified after the pages before it answered with records: a 304 says this page is unchanged, not the pages after it, so the walk cannot end here. Stopping without advancing the checkpoint; run the mission again (a first page answered 304 is "nothing changed since", the whole fetch's empty answer)`
      : `page ${index + 1} (${describe()}) answered ${status}, which the request allows, although the page before it gave a cursor to it: the API said more pages follow, so this is no end of the walk. Stopping without advancing the checkpoint; run the mission again once the API answers`,
  );
}

/**
 * `until: length(response) == 0` on an API that wraps its pages (`{ "users": [...], "total": 25 }`):
 * `length` and `count` of an object are 0 (reference §F), so it held on the first page, full of
 * records, and the walk ended there — the run completed with one page and a `since` checkpoint
 * advanced past the rest (helper 93; upstream's docs write that very `until`). Called where
 * `until` held on a page holding `records` that says more may follow (pagination.ts): when
 * `length(…)`/`count(…)` of an object of the page decided it — with the page's record count in
 * their place it no longer holds — the fetch fails naming the list to count. An `until` that holds
 * for another reason too (`not response.has_more`), or on a short last page, ends the walk as meant.
 */
function refuseCountOfPageObject(until: Expr, ctx: EvalContext, index: number, records: number, field: string | undefined): void {
  const counted: CallExpr[] = [];
  walkExpr(until, (e) => {
    if (e.kind !== 'Call' || (e.callee.name !== 'length' && e.callee.name !== 'count') || e.args.length !== 1) return;
    const arg = e.args[0]!;
    if (arg.kind !== 'Ref' || arg.parts[0] !== 'response') return;
    const value = evaluate(arg, ctx);
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) counted.push(e);
  });
  if (counted.length === 0) return;
  const recounted = withNodesReplaced(until, new Map(counted.map((c) => [c, { kind: 'Number', value: records, start: c.start, end: c.end }])));
  if (isTruthy(evaluate(recounted, ctx))) return;
  const first = counted[0]!;
  const arg = (first.args[0] as RefExpr).parts.join('.');
  throw new PaginationError(
    `\`until\` holds on page ${index + 1}, which holds ${records} record${records === 1 ? '' : 's'} and says more may follow, only because \`${first.callee.name}(${arg})\` counts an object, which is 0: ` +
      `the walk would end there with the pages after it never asked for. ` +
      (field !== undefined && arg === 'response' ? `Count the page's records: \`${first.callee.name}(response.${field}) == 0\`` : `Count a list: \`${first.callee.name}(response.<the list of records>) == 0\``),
  );
}

/** A copy of `expr` with each node of `replace` swapped for its replacement (the tree is plain data). */
function withNodesReplaced(expr: Expr, replace: ReadonlyMap<object, object>): Expr {
  const copy = (node: unknown): unknown => {
    if (node === null || typeof node !== 'object') return node;
    const swapped = replace.get(node);
    if (swapped) return swapped;
    if (Array.isArray(node)) return node.map(copy);
    return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, copy(v)]));
  };
  return copy(expr) as Expr;
}

/**
 * The top-level field of a page's body its items were taken from (pagination.ts `itemsOf`): what
 * `response.<field>` names after the fetch. Undefined when the body is itself the array or the
 * items sit deeper (`itemsPath: "a.b"`).
 */
function envelopeField(body: unknown, itemsPath: string | undefined): string | undefined {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return undefined;
  const items = itemsOf(body, itemsPath);
  for (const [field, value] of Object.entries(body)) if (value === items) return field;
  return undefined;
}

/** The records an unpaginated answer holds, as a page walk counts them (0 where it cannot tell). */
function recordsHeld(body: unknown, itemsPath: string | undefined): number {
  try {
    return itemsOf(body, itemsPath).length;
  } catch {
    return 0;
  }
}

/** The whole count of records an answer's `X-Total-Count` header gives, if it gives one. */
function totalCountHeader(headers: Readonly<Record<string, string | undefined>>): number | undefined {
  const text = headers['x-total-count']?.trim();
  return text !== undefined && /^\d{1,15}$/.test(text) ? Number(text) : undefined;
}
