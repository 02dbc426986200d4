/**
 * Declaration checks: one mission per file with a `run` pipeline, at most one `run`/`schedule`
 * that matters, unique names per kind (sources, stores, schemas, transforms, actions — actions
 * across a folder mission's files too), well-formed sources, store declarations and schedules.
 *
 * Also fills the context's name tables (first declaration wins) that the step checks resolve
 * names against.
 */
import { storeTargetProblem } from './store-targets.js';
import { SCHEDULE_UNIT_MS, type MissionDecl, type Name, type Program, type Schedule, type SourceDecl, type Span, type StoreDecl, type TopLevelItem } from './ast.js';
import type { CheckContext } from './check-context.js';
import { checkExpr } from './check-expressions.js';
import { checkAt, checkCron, checkNumber, checkRetry, checkTimeZone, isTimeZone, MAX_DURATION_MS } from './check-values.js';

/** Mission count, and top-level declarations that the runtime ignores. */
/**
 * A file of a folder mission other than its root: only `action`s (and `transform`s), no
 * mission. `reqon check` on it alone checks it as such a part instead of saying "No mission".
 */
export function isMissionPart(program: Program): boolean {
  const items = (program.items ?? []).filter((i) => i);
  return items.length > 0 && items.every((i) => i.kind === 'Action' || i.kind === 'Transform');
}

export function checkProgramShape(ctx: CheckContext): MissionDecl | undefined {
  const root = ctx.unit.root;
  const items = root.items ?? [];
  const missions = items.filter((i): i is MissionDecl => i?.kind === 'Mission');
  if (missions.length === 0) {
    if (isMissionPart(root)) return undefined; // checked as a part (check.ts)
    ctx.report(root.file, 'E3001', { start: 0, end: 0 }, `No mission found in ${root.file}`, 'declare one: mission Name { … run Action }');
    return undefined;
  }
  const first = missions[0]!;
  for (const extra of missions.slice(1)) {
    ctx.report(
      root.file,
      'E3002',
      extra.name ?? extra,
      `Only the first mission runs: \`${extra.name?.name ?? '?'}\` is ignored`,
      `keep one mission per file (\`${first.name?.name ?? '?'}\` ${ctx.where(root.file, first.start, root.file)} is the one that runs)`,
    );
  }
  for (const item of items) reportIgnored(ctx, item, first);
  return first;
}

const IGNORED_KINDS: Partial<Record<TopLevelItem['kind'], string>> = {
  Source: 'source',
  Store: 'store',
  Schema: 'schema',
  Transform: 'transform',
  Action: 'action',
};

function reportIgnored(ctx: CheckContext, item: TopLevelItem | undefined, mission: MissionDecl): void {
  if (!item) return;
  const word = IGNORED_KINDS[item.kind];
  if (!word || !('name' in item) || !item.name) return;
  ctx.report(
    ctx.rootFile,
    'E3032',
    item.name,
    `Top-level ${word} \`${item.name.name}\` is ignored: only declarations inside the mission are used`,
    `move it into mission \`${mission.name?.name ?? '?'}\``,
  );
}

/** `run` and `schedule` lines of the mission: one required, several warned about. */
export function checkMissionItems(ctx: CheckContext, mission: MissionDecl): void {
  const file = ctx.rootFile;
  const pipelines = mission.pipelines ?? [];
  if (pipelines.length === 0) {
    ctx.report(
      file,
      'E3003',
      mission.name ?? mission,
      `Mission \`${mission.name?.name ?? '?'}\` has no \`run\` pipeline`,
      (mission.actions ?? []).length > 0
        ? `add a line such as \`run ${mission.actions[0]!.name.name}\``
        : 'declare an action and add `run ActionName`',
    );
  }
  for (const p of pipelines.slice(0, -1)) {
    ctx.report(file, 'E3004', ctx.findWord(file, p, 'run'), 'Several `run` lines: only the last one is used', 'delete this line or merge it into the last `run`');
  }
  const schedules = mission.schedules ?? [];
  for (const s of schedules.slice(0, -1)) {
    ctx.report(file, 'E3005', ctx.findWord(file, s, 'schedule'), 'Several schedules: only the last one is used', 'delete this schedule or merge it into the last one');
  }
  for (const s of schedules) checkSchedule(ctx, file, s);
}

/** Registers each name in `into`, reporting every later declaration of a taken name. */
export function registerNames<T extends { name: Name; start: number; end: number }>(
  ctx: CheckContext,
  what: string,
  decls: readonly T[],
  into: Map<string, T>,
  fileOf: (decl: T) => string,
): void {
  for (const decl of decls) {
    const name = decl?.name?.name;
    if (!name) continue;
    const first = into.get(name);
    if (!first) {
      into.set(name, decl);
      continue;
    }
    const file = fileOf(decl);
    const where = ctx.where(fileOf(first), first.name.start, file);
    if (what === 'store' || what === 'source') {
      // Upstream accepts these; the run uses the first (mission-model.ts), as the checks do.
      ctx.report(file, 'E3035', decl.name, `Duplicate ${what} \`${name}\`: this declaration is ignored, the one ${where} is used`, 'rename or remove one of them');
      continue;
    }
    ctx.report(
      file,
      'E3006',
      decl.name,
      `Duplicate ${what} \`${name}\``,
      `\`${name}\` is already declared ${where}; rename or remove one of them`,
    );
  }
}

export function checkSourceDecl(ctx: CheckContext, source: SourceDecl): void {
  const file = ctx.rootFile;
  const name = source.name?.name ?? '?';
  const span: Span = source.name ?? source;
  if (!source.auth) {
    ctx.report(file, 'E3015', span, `Source \`${name}\` has no \`auth\``, 'add `auth: none` (or bearer, oauth2, basic, api_key)');
  }
  if (!source.base && !source.spec) {
    ctx.report(
      file,
      'E3016',
      span,
      `Source \`${name}\` has neither \`base\` nor \`from\``,
      'add `base: "https://api.example.com"` or declare it `from "openapi.yaml"`',
    );
  }
  if (source.base && !isHttpUrl(source.base.value)) {
    ctx.report(
      file,
      'E3017',
      source.base,
      `Expected an http(s) URL but got: "${source.base.value}"`,
      'write the base as "https://host/path"',
    );
  }
  const at = (key: string) => ctx.optionValue(file, source.optionSpans, key, span);
  checkNumber(ctx, file, 'timeout', source.timeout, 'requestTimeout', at('timeout'));
  checkRetry(ctx, file, source.retry);
  checkNumber(ctx, file, 'maxResponseBytes', source.maxResponseBytes, 'responseBytes', at('maxResponseBytes'));
  for (const h of source.headers ?? []) checkExpr(ctx, file, h?.value);
  for (const p of source.proxy ?? []) checkExpr(ctx, file, p);

  const rl = source.rateLimit;
  if (rl) {
    const rat = (key: string) => ctx.optionValue(file, rl.optionSpans, key, rl);
    checkNumber(ctx, file, 'maxWait', rl.maxWait, 'positive', rat('maxWait'));
    checkNumber(ctx, file, 'fallbackRpm', rl.fallbackRpm, 'positive', rat('fallbackRpm'));
    if (rl.model) {
      const m = rl.model;
      for (const key of ['capacity', 'refill', 'safety'] as const) {
        checkNumber(ctx, file, key, m[key], 'positive', ctx.valueOf(file, m, key));
      }
    }
  }
  const cb = source.circuitBreaker;
  if (cb) {
    const cat = (key: string) => ctx.optionValue(file, cb.optionSpans, key, cb);
    for (const key of ['failureThreshold', 'resetTimeout', 'successThreshold', 'failureWindow', 'minimumRequests'] as const) {
      checkNumber(ctx, file, key, cb[key], 'positive', cat(key));
    }
    checkNumber(ctx, file, 'failureRate', cb.failureRate, 'positive', cat('failureRate'));
    if (cb.failureRate !== undefined && cb.failureRate > 100) {
      ctx.report(file, 'E3023', cat('failureRate'), `\`failureRate\` expected a percentage ≤ 100 but got: ${cb.failureRate}`);
    }
  }
}

function isHttpUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
  } catch {
    return false;
  }
}

/**
 * A sql and a nosql store on one table (SQL names are case-insensitive): the table has the shape
 * of whichever writes first, and the other's first write fails the run after the first's writes
 * committed. Two stores of one kind on one table share it, as they may.
 */
export function checkSharedTables(ctx: CheckContext, stores: readonly (StoreDecl | null | undefined)[]): void {
  const first = new Map<string, StoreDecl>();
  for (const store of stores) {
    const kind = store?.type?.kind;
    if (!store || (kind !== 'sql' && kind !== 'nosql') || typeof store.target?.value !== 'string') continue;
    const table = store.target.value.toLowerCase();
    const other = first.get(table);
    if (other === undefined) first.set(table, store);
    else if (other.type.kind !== kind) {
      ctx.report(
        ctx.rootFile,
        'E3048',
        store.target,
        `${kind} store \`${store.name?.name}\` and ${other.type.kind} store \`${other.name?.name}\` use one table, ${JSON.stringify(store.target.value)}: whichever writes second fails the run`,
        'give each its own table',
      );
    }
  }
}

export function checkStoreDecl(ctx: CheckContext, store: StoreDecl): void {
  const kind = store.type?.kind;
  const target = store.target;
  if (kind && target && typeof target.value === 'string') {
    const problem = storeTargetProblem(kind, target.value);
    if (problem) {
      ctx.report(ctx.rootFile, 'E3048', target, `${kind} store target ${JSON.stringify(target.value)} ${problem}: running fails at this store's first read or write`, kind === 'file' ? 'use a relative path such as "orders" or "exports/orders"' : 'rename the store\'s table, e.g. "orders"');
    }
  }
  const b = store.batch;
  if (!b) return;
  const file = ctx.rootFile;
  checkNumber(ctx, file, 'size', b.size, 'atLeastOne', ctx.valueOf(file, b, 'size'));
  checkNumber(ctx, file, 'maxDelay', b.maxDelay, 'nonNegative', ctx.valueOf(file, b, 'maxDelay'));
}


function checkSchedule(ctx: CheckContext, file: string, s: Schedule): void {
  const t = s.trigger;
  if (t) {
    switch (t.kind) {
      case 'every':
        checkNumber(ctx, file, 'every', t.amount, 'atLeastOne', ctx.valueOf(file, t, 'every'));
        // Its firings are instants the log must hold: at most 36500d apart, as a pause's duration.
        if (typeof t.amount === 'number' && t.amount >= 1 && t.unit && t.amount * SCHEDULE_UNIT_MS[t.unit] > MAX_DURATION_MS) {
          ctx.report(file, 'E3023', ctx.valueOf(file, t, 'every') ?? t, `\`every\` expected an interval of at most 36500 days (about 100 years) but got: ${String(t.amount)} ${t.unit}`);
        }
        break;
      case 'cron':
        if (t.expression) checkCron(ctx, file, t.expression, s.timezone?.value);
        break;
      case 'at':
        if (t.when) checkAt(ctx, file, t.when, s.timezone?.value);
        break;
      default: {
        const unreachable: never = t;
        void unreachable;
      }
    }
  }
  if (s.timezone) checkTimeZone(ctx, file, s.timezone);
  // Helper 91: `every 1 days { timezone: "Europe/Berlin" }` fired at registration time + 24 h, the
  // zone unused and unsaid. (An unknown zone is E3028's to say; UTC, which shifts nothing, is
  // what an interval is counted in anyway, as §H's h9 writes it.)
  if (s.timezone && s.trigger?.kind === 'every' && isTimeZone(s.timezone.value) && !/^(Etc\/)?(UTC|GMT)$/i.test(s.timezone.value)) {
    const t = s.trigger;
    ctx.report(file, 'E3068', s.timezone, `\`timezone\` is not used by an \`every\` schedule: its firings are every ${String(t.amount)} ${t.unit ?? ''} from when it was registered, in no zone`, 'for a time of day in a zone, use `cron "0 6 * * *" { timezone: "…" }`');
  }
  const at = (key: string) => ctx.optionValue(file, s.optionSpans, key, s);
  checkNumber(ctx, file, 'maxConcurrency', s.maxConcurrency, 'atLeastOne', at('maxConcurrency'));
  if (s.retry) {
    const r = s.retry;
    checkNumber(ctx, file, 'maxRetries', r.maxRetries, 'nonNegative', ctx.valueOf(file, r, 'maxRetries'));
    checkNumber(ctx, file, 'delaySeconds', r.delaySeconds, 'nonNegative', ctx.valueOf(file, r, 'delaySeconds'));
  }
}
