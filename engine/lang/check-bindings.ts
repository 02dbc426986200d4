/**
 * Variable checks, in the scopes a run has (reference §C.7): each action starts with no
 * variables; `let`, `apply … as`, a taken match arm's object-pattern names and a `wait`
 * (`webhook`) bind in the current scope; a `for` body runs in a new scope per iteration, holding
 * the loop variable. Match arm blocks and validate fallbacks run in the scope around them.
 *
 * Two warnings, for forms upstream's examples write and running then surprises:
 * - E3040: a `let` in a loop body naming a variable bound outside the loop binds a new variable
 *   for that iteration; the outer one never changes (`let count = count + 1` counts nothing).
 * - E3041: a `{NAME}` placeholder of a request path that no variable can fill: a bare name is
 *   then read from the run's `--env` settings (path-template.ts), and without one running fails
 *   there (R4010); a dotted one always fails.
 * A name bound on only some paths (a match arm's block) counts as bound: a warning must be true.
 */
import type { ActionDecl, Name, Span, Step, SubPattern } from './ast.js';
import type { CheckContext } from './check-context.js';
import { pathPlaceholders } from './path-placeholders.js';

interface Binding {
  /** Where it was bound, for "the outer `count` (line N)". */
  span: Span;
}

class BindingScope {
  readonly names = new Map<string, Binding>();
  constructor(
    readonly parent: BindingScope | undefined,
    /** A `for` body's iteration scope. */
    readonly loop: boolean,
  ) {}

  lookup(name: string): Binding | undefined {
    return this.names.get(name) ?? this.parent?.lookup(name);
  }

  bind(name: Name | undefined): void {
    if (name?.name && !this.names.has(name.name)) this.names.set(name.name, { span: name.span });
  }
}

export function checkBindings(ctx: CheckContext, action: ActionDecl): void {
  const file = action.file || ctx.rootFile;
  walk(ctx, file, action.steps, new BindingScope(undefined, false));
}

function walk(ctx: CheckContext, file: string, steps: readonly Step[] | undefined, scope: BindingScope): void {
  for (const step of steps ?? []) {
    if (!step || typeof step !== 'object') continue;
    switch (step.kind) {
      case 'Let':
        if (scope.loop && step.name?.name && !scope.names.has(step.name.name)) {
          const outer = scope.parent?.lookup(step.name.name);
          if (outer) warnLoopLet(ctx, file, step.name, outer);
        }
        scope.bind(step.name);
        break;
      case 'Apply':
        scope.bind(step.as);
        break;
      case 'For': {
        const body = new BindingScope(scope, true);
        body.bind(step.variable);
        walk(ctx, file, step.body, body);
        break;
      }
      case 'Validate':
        walk(ctx, file, step.fallback, scope);
        break;
      case 'Match':
        for (const arm of step.arms ?? []) {
          if (arm?.pattern?.kind === 'ObjectPattern') bindPattern(scope, arm.pattern.fields);
          if (arm?.body?.kind === 'Steps') walk(ctx, file, arm.body.steps, scope);
        }
        break;
      case 'Wait':
        scope.names.set('webhook', { span: step.span });
        break;
      case 'Fetch':
        if (step.path?.kind === 'String') checkPlaceholders(ctx, file, step.path.value, step.path.span, scope);
        break;
      default:
        break;
    }
  }
}

function bindPattern(scope: BindingScope, fields: readonly { value: SubPattern }[]): void {
  for (const f of fields ?? []) {
    if (f?.value?.kind === 'Bind') scope.bind(f.value.name);
    else if (f?.value?.kind === 'ObjectPattern') bindPattern(scope, f.value.fields);
  }
}

function warnLoopLet(ctx: CheckContext, file: string, name: Name, outer: Binding): void {
  const n = name.name;
  ctx.report(
    file,
    'E3040',
    name.span,
    `\`let ${n}\` inside this loop binds a new variable for each iteration; the outer \`${n}\` (${ctx.where(file, outer.span.start, file).replace(/^at /, '')}) keeps its value`,
    `a loop cannot change a variable outside it. To count or total over the items, compute it from the collection after (or instead of) the loop: \`let ${n} = length(xs where .failed)\`, \`let ${n} = sum(xs.amount)\`; to keep a value per item, store it (\`store { … } -> s\`) and read the store afterwards (\`length(s)\`). If a new variable per iteration is what you mean, give it a name of its own`,
  );
}

function checkPlaceholders(ctx: CheckContext, file: string, template: string, span: Span, scope: BindingScope): void {
  for (const placeholder of pathPlaceholders(template)) {
    const head = placeholder.split('.')[0]!;
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
