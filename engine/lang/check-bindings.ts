/**
 * Variable checks, in the scopes a run has (reference §C.7, as docs/language.md amends it): each
 * action starts with no variables; `let`, `apply … as`, a taken match arm's object-pattern names
 * and a `wait` (`webhook`) bind in the current scope; a `for` body runs in a new scope per
 * iteration, holding the loop variable. Match arm blocks and validate fallbacks run in the scope
 * around them. One amendment: a `let` in a loop body naming a variable bound outside the loop
 * sets that variable (`let count = count + 1` counts), unless a concurrent loop's iteration lies
 * between them (Scope.let, which runs it; `loopAssignments` names those lets for the runtime).
 *
 * Two warnings, for forms upstream's examples write and running then surprises:
 * - E3040: a `let` in a *concurrent* loop body (`concurrency N`, N > 1) naming a variable bound
 *   outside that loop binds a new variable for that iteration; the outer one never changes.
 * - E3041: a `{NAME}` placeholder of a request path that no variable can fill: a bare name is
 *   then read from the run's `--env` settings (path-template.ts), and without one running fails
 *   there (R4010); a dotted one always fails.
 * - E3069: a page counter's name in a fetch's `until` that no variable binds (see warnPageCounter).
 * A name bound on only some paths (a match arm's block) counts as bound: a warning must be true.
 */
import type { ActionDecl, Expr, ForStep, LetStep, Name, Span, Step, SubPattern } from './ast.js';
import { walkExpr } from './check-expressions.js';
import { namePatternBinds } from './ast.js';
import type { CheckContext } from './check-context.js';
import { pathPlaceholders, strayBraces } from './path-placeholders.js';
import { didYouMean } from './suggest.js';

interface Binding {
  /** Where it was bound, for "the outer `count` (line N)". */
  span: Span;
}

/** What a loop body's scope is: none (the action's, a match arm's), a sequential or a concurrent iteration. */
type ScopeKind = 'action' | 'sequential' | 'concurrent';

class BindingScope {
  /** Created on the first binding: most loop bodies and many actions bind nothing. */
  private bound: Map<string, Binding> | undefined;
  constructor(
    readonly parent: BindingScope | undefined,
    readonly kind: ScopeKind,
  ) {}

  has(name: string): boolean {
    return this.bound?.has(name) === true;
  }

  lookup(name: string): Binding | undefined {
    return this.bound?.get(name) ?? this.parent?.lookup(name);
  }

  /** Every name bound here and outwards (for "did you mean"). */
  names(): string[] {
    return [...(this.bound?.keys() ?? []), ...(this.parent?.names() ?? [])];
  }

  bind(name: Name | undefined): void {
    if (name?.name && !this.has(name.name)) this.set(name.name, { span: name });
  }

  set(name: string, binding: Binding): void {
    (this.bound ??= new Map()).set(name, binding);
  }

  /**
   * Where `let name` in this scope lands: the scope of the nearest binding it sets (searching
   * outwards, through sequential iterations only), or, when a concurrent iteration stops the
   * search, that outer binding beyond it (`isolatedFrom`, for E3040).
   */
  letTarget(name: string): { scope?: BindingScope; isolatedFrom?: Binding } {
    for (let s: BindingScope | undefined = this; s; s = s.parent) {
      if (s.has(name)) return { scope: s };
      if (s.kind === 'concurrent') {
        const outer = s.parent?.lookup(name);
        return outer ? { isolatedFrom: outer } : {};
      }
    }
    return {};
  }
}

/** What one walk of an action reports into: the check's findings, or only the lets that set an outer variable. */
interface BindingSink {
  ctx?: CheckContext;
  file: string;
  /** Lets in a loop body that set a variable bound outside their loop (collected for `loopAssignments` only). */
  assignments?: Set<LetStep>;
}

export function checkBindings(ctx: CheckContext, action: ActionDecl): void {
  walk({ ctx, file: action.file || ctx.rootFile }, action.steps, new BindingScope(undefined, 'action'));
}

/**
 * The lets of `action` inside a loop body that set a variable bound outside that loop (and so
 * leave state behind an iteration: MissionModel.iterationsSkippable). A name bound on only some
 * paths counts, so this may name a let that binds afresh at run time, never miss one that sets.
 */
export function loopAssignments(action: ActionDecl): ReadonlySet<LetStep> {
  const assignments = new Set<LetStep>();
  walk({ file: action.file, assignments }, action.steps, new BindingScope(undefined, 'action'));
  return assignments;
}

function walk(sink: BindingSink, steps: readonly Step[] | undefined, scope: BindingScope): void {
  for (const step of steps ?? []) {
    if (!step || typeof step !== 'object') continue;
    switch (step.kind) {
      case 'Let': {
        const name = step.name?.name;
        if (!name) break;
        const target = scope.letTarget(name);
        if (target.scope && target.scope !== scope) sink.assignments?.add(step);
        else {
          if (target.isolatedFrom && sink.ctx) warnConcurrentLet(sink.ctx, sink.file, step.name, target.isolatedFrom);
          scope.bind(step.name);
        }
        break;
      }
      case 'Apply':
        scope.bind(step.as);
        break;
      case 'For': {
        if (sink.ctx) warnLoopOverNothing(sink.ctx, sink.file, step, scope);
        const body = new BindingScope(scope, isConcurrent(step) ? 'concurrent' : 'sequential');
        body.bind(step.variable);
        walk(sink, step.body, body);
        break;
      }
      case 'Validate':
        walk(sink, step.fallback, scope);
        break;
      case 'Match':
        for (const arm of step.arms ?? []) {
          if (arm?.pattern?.kind === 'ObjectPattern') bindPattern(scope, arm.pattern.fields);
          else if (arm?.pattern && sink.ctx && namePatternBinds(arm.pattern, sink.ctx.schemas)) scope.bind(arm.pattern.schema);
          if (arm?.body?.kind === 'Steps') walk(sink, arm.body.steps, scope);
        }
        break;
      case 'Wait':
        scope.set('webhook', { span: step });
        break;
      case 'Fetch':
        if (step.path?.kind === 'String' && sink.ctx) checkPlaceholders(sink.ctx, sink.file, step.path.value, step.path, scope);
        if (step.options?.until && sink.ctx) warnPageCounter(sink.ctx, sink.file, step.options.until, scope);
        break;
      default:
        break;
    }
  }
}

/**
 * E3065: `for o in orders` where `orders` is a declared store and also a variable bound before the
 * loop — the loop iterates the store (§C.2), which the author of the `let` rarely means.
 * E3047: `for o in ordrs` where `ordrs` is no store and no variable bound before the loop runs
 * zero times (§C.2: a bare name is a variable, never a field of `response`) — a misspelt store or
 * variable, said at run time only as progress while the run completed with nothing done. Not in a
 * folder mission's part, whose stores the mission file declares.
 */
function warnLoopOverNothing(ctx: CheckContext, file: string, loop: ForStep, scope: BindingScope): void {
  const c = loop.collection;
  if (ctx.part || c?.kind !== 'Ref' || c.parts?.length !== 1) return;
  const name = c.parts[0]!;
  const bound = scope.lookup(name);
  if (ctx.stores.has(name) && bound !== undefined) {
    // Helper 79: `let orders = response.data` then `for o in orders` looped over the empty store
    // `orders` and completed with nothing done, where every other use of `orders` read the variable.
    ctx.report(
      file,
      'E3065',
      c,
      `\`${name}\` is a store and a variable (${ctx.where(file, bound.span.start, file).replace(/^at /, '')}): a \`for\` over a bare name iterates the store \`${name}\`, not the variable`,
      `give the variable a name of its own (\`let ${name}List = …\`) to loop over it, or the store another name`,
    );
    return;
  }
  if (name === 'response' || ctx.stores.has(name) || bound !== undefined) return;
  const close = didYouMean(name, [...ctx.stores.keys(), ...scope.names()]);
  ctx.report(
    file,
    'E3047',
    c,
    `\`${name}\` is no store and no variable bound before this loop: the loop runs zero times`,
    close ?? `a field of the response is \`response.${name}\`; a store or a \`let\` before the loop is looped over by its name`,
  );
}

function bindPattern(scope: BindingScope, fields: readonly { value: SubPattern }[]): void {
  for (const f of fields ?? []) {
    if (f?.value?.kind === 'Bind' || f?.value?.kind === 'List') scope.bind(f.value.name);
    else if (f?.value?.kind === 'ObjectPattern') bindPattern(scope, f.value.fields);
  }
}

/** A loop whose iterations may run at once (`concurrency N`, N > 1): each keeps its own variables. */
export function isConcurrent(loop: ForStep): boolean {
  return (loop.concurrency ?? 1) > 1;
}

function warnConcurrentLet(ctx: CheckContext, file: string, name: Name, outer: Binding): void {
  const n = name.name;
  ctx.report(
    file,
    'E3040',
    name,
    `\`let ${n}\` inside this concurrent loop binds a new variable for each iteration; the outer \`${n}\` (${ctx.where(file, outer.span.start, file).replace(/^at /, '')}) keeps its value`,
    `iterations that run at once cannot update a variable in order. Drop \`concurrency\` to let each iteration set \`${n}\` in turn, or compute it from the collection after the loop: \`let ${n} = length(xs where .failed)\`, \`let ${n} = sum(xs.amount)\`. If a new variable per iteration is what you mean, give it a name of its own`,
  );
}

function checkPlaceholders(ctx: CheckContext, file: string, template: string, span: Span, scope: BindingScope): void {
  for (const piece of strayBraces(template)) {
    ctx.report(
      file,
      'E3061',
      ctx.findWord(file, span, piece),
      `\`${piece}\` in this path is no placeholder, so it is sent as written, never filled`,
      'a placeholder is a bound name in braces: `{id}`, `{order.id}`',
    );
  }
  for (const placeholder of pathPlaceholders(template)) {
    const dot = placeholder.indexOf('.');
    const head = dot < 0 ? placeholder : placeholder.slice(0, dot);
    if (scope.lookup(head)) continue;
    const where = ctx.findWord(file, span, `{${placeholder}}`);
    const bare = placeholder === head;
    ctx.report(
      file,
      'E3041',
      where,
      bare
        ? `No variable \`${head}\` is bound before this request, so its path placeholder {${head}} is read from the run's setting \`${head}\` (\`reqon run … --env ${head}=…\`): without one, running fails here (R4010)`
        : `No variable \`${head}\` is bound before this request, so its path placeholder {${placeholder}} cannot be filled: running fails here (R4010)`,
      bare
        ? `bind it earlier in this action (\`let ${head} = …\`) or give every run \`--env ${head}=…\``
        : `a dotted placeholder is filled from a variable (a \`let\`, a loop variable, an \`apply … as\`), never from a record field; bind \`${head}\` earlier in this action`,
    );
  }
}

/** Names upstream's docs and users give a page counter in `until` (`until: … or page > 10`). */
const PAGE_COUNTERS: ReadonlySet<string> = new Set(['page', 'pageNumber', 'page_number', 'pageIndex', 'page_index', 'currentPage', 'current_page', 'pageCount', 'page_count', 'pages']);

/**
 * E3069: `until: … or page > 3` ("stop after 3 pages", upstream's docs). `until` sees each page's
 * answer as `response`, and a bare name reads that answer's field (§D.2): there is no counter,
 * so `page` is absent unless the API sends one, the condition never holds, and the walk ran on
 * to its end or the 10,000-page limit (helper 93: 41 requests for "stop after 5").
 */
function warnPageCounter(ctx: CheckContext, file: string, until: Expr, scope: BindingScope): void {
  walkExpr(until, (e) => {
    // A variable of that name is what the name reads (§D.2): no warning then.
    if (e.kind !== 'Ref' || e.leadingDot || e.parts.length !== 1 || !PAGE_COUNTERS.has(e.parts[0]!) || scope.lookup(e.parts[0]!)) return;
    const name = e.parts[0]!;
    ctx.report(
      file,
      'E3069',
      e,
      `\`${name}\` in \`until\` is no page counter: \`until\` sees each page's answer, so \`${name}\` reads its field \`${name}\` (absent unless the API sends one)`,
      `to stop after N pages write \`maxPages: N\` beside \`until\`; to read the API's own field write \`response.${name}\``,
    );
  });
}
