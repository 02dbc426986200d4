/**
 * Expression checks: every function call names a built-in (or gets "not supported yet" for the
 * documented-but-unimplemented helpers of §D.6), has an argument count the built-in accepts, and
 * `env(...)` reads a literal name — a dynamic name would make the run's inputs unknowable before
 * it starts. Also: arms of a match expression after a bare `_` can never be chosen.
 *
 * `walkExpr` visits every sub-expression; it tolerates the holes a recovering parser leaves.
 */
import type { Expr, Name } from './ast.js';
import type { CheckContext } from './check-context.js';
import { BUILTIN_ARITY, BUILTIN_NAMES, FUNCTION_ARGUMENTS, IS_TYPE_NAMES } from './builtin-names.js';
import { didYouMean } from './suggest.js';

/** Calls `visit` on `expr` and every expression inside it, parents first. */
export function walkExpr(expr: Expr | undefined | null, visit: (e: Expr) => void): void {
  if (!expr || typeof expr !== 'object') return;
  visit(expr);
  switch (expr.kind) {
    case 'Number':
    case 'String':
    case 'Boolean':
    case 'Null':
    case 'Ref':
    case 'Unsupported':
      return;
    case 'Member':
      walkExpr(expr.object, visit);
      return;
    case 'Index':
      walkExpr(expr.object, visit);
      walkExpr(expr.index, visit);
      return;
    case 'Call':
      for (const a of expr.args ?? []) walkExpr(a, visit);
      return;
    case 'Unary':
      walkExpr(expr.operand, visit);
      return;
    case 'Binary':
      walkExpr(expr.left, visit);
      walkExpr(expr.right, visit);
      return;
    case 'Is':
      walkExpr(expr.operand, visit);
      return;
    case 'Conditional':
      walkExpr(expr.test, visit);
      walkExpr(expr.consequent, visit);
      walkExpr(expr.alternate, visit);
      return;
    case 'Array':
      for (const e of expr.elements ?? []) walkExpr(e, visit);
      return;
    case 'Object':
      for (const entry of expr.entries ?? []) walkExpr(entry?.value, visit);
      return;
    case 'MatchExpr':
      walkExpr(expr.subject, visit);
      for (const arm of expr.arms ?? []) {
        walkExpr(arm?.pattern, visit);
        walkExpr(arm?.guard, visit);
        walkExpr(arm?.result, visit);
      }
      return;
    case 'AnyOf':
      walkExpr(expr.collection, visit);
      walkExpr(expr.where, visit);
      return;
    case 'Where':
      walkExpr(expr.collection, visit);
      walkExpr(expr.condition, visit);
      return;
    case 'Lambda':
      walkExpr(expr.body, visit);
      return;
    default: {
      const unreachable: never = expr;
      return unreachable;
    }
  }
}

/**
 * E3046: `{ total: 1, total: 2 }` or `map … { v: .x, v: 0 }` keeps the last value (as upstream's
 * JavaScript objects do) and never uses the first — most often a copy-paste slip. Keys after a
 * spread may override it on purpose; only a key written twice is said. A warning: upstream accepts it.
 */
export function warnRepeatedKeys(ctx: CheckContext, file: string, entries: readonly ({ kind?: string; key?: { name: string; start: number; end: number }; name?: { name: string; start: number; end: number } } | null | undefined)[] | undefined): void {
  if (!entries || entries.length < 2) return;
  const keyOf = (entry: (typeof entries)[number]) => (entry?.kind === 'Spread' ? undefined : (entry?.key ?? entry?.name));
  // Pairwise over the few keys a literal has: this runs on every object of a mission, and a Set per
  // object is garbage the checker's hot loop does not need.
  for (let i = 1; i < entries.length; i++) {
    const key = keyOf(entries[i]);
    if (!key || typeof key.name !== 'string') continue;
    for (let j = 0; j < i; j++) {
      if (keyOf(entries[j])?.name !== key.name) continue;
      ctx.report(file, 'E3046', key, `Key \`${key.name}\` is given twice here: the last one wins, the first is never used`, 'remove one of them');
      break;
    }
  }
}

/**
 * Runs every expression check on `expr`, reporting into `file`. The same walk as `walkExpr`
 * (parents first, children in the same order, so findings keep their order), written out so
 * the checker's hottest loop makes no closure per expression.
 */
export function checkExpr(ctx: CheckContext, file: string, expr: Expr | undefined | null): void {
  if (!expr || typeof expr !== 'object') return;
  switch (expr.kind) {
    case 'Number':
    case 'String':
    case 'Boolean':
    case 'Null':
    case 'Ref':
    case 'Unsupported':
      return;
    case 'Member':
      checkExpr(ctx, file, expr.object);
      return;
    case 'Index':
      checkExpr(ctx, file, expr.object);
      checkExpr(ctx, file, expr.index);
      return;
    case 'Call':
      checkCall(ctx, file, expr);
      for (const a of expr.args ?? []) checkExpr(ctx, file, a);
      return;
    case 'Unary':
      checkExpr(ctx, file, expr.operand);
      return;
    case 'Binary':
      checkExpr(ctx, file, expr.left);
      checkExpr(ctx, file, expr.right);
      // Dividing by a literal zero fails whenever it runs (R4003): say so now.
      if ((expr.operator === '/' || expr.operator === '%') && isLiteralZero(expr.right)) {
        ctx.report(file, 'E3044', expr, `\`${expr.operator} 0\` fails whenever it is evaluated (division by zero)`, 'divide by a value that cannot be zero, or guard it: `if d == 0 then null else x / d`');
      }
      return;
    case 'Is':
      checkExpr(ctx, file, expr.operand);
      checkIsType(ctx, file, expr.type);
      return;
    case 'Conditional':
      checkExpr(ctx, file, expr.test);
      checkExpr(ctx, file, expr.consequent);
      checkExpr(ctx, file, expr.alternate);
      return;
    case 'Array':
      for (const e of expr.elements ?? []) checkExpr(ctx, file, e);
      return;
    case 'Object':
      warnRepeatedKeys(ctx, file, expr.entries);
      for (const entry of expr.entries ?? []) checkExpr(ctx, file, entry?.value);
      return;
    case 'MatchExpr':
      checkMatchExprArms(ctx, file, expr);
      checkExpr(ctx, file, expr.subject);
      for (const arm of expr.arms ?? []) {
        // An object pattern's keys are tests, not a record built: its own entries only are walked.
        if (arm?.pattern?.kind === 'Object') for (const entry of arm.pattern.entries ?? []) checkExpr(ctx, file, entry?.value);
        else checkExpr(ctx, file, arm?.pattern);
        checkExpr(ctx, file, arm?.guard);
        checkExpr(ctx, file, arm?.result);
      }
      return;
    case 'AnyOf':
      checkExpr(ctx, file, expr.collection);
      checkExpr(ctx, file, expr.where);
      return;
    case 'Where':
      checkExpr(ctx, file, expr.collection);
      checkExpr(ctx, file, expr.condition);
      return;
    case 'Lambda':
      checkExpr(ctx, file, expr.body);
      return;
    default: {
      const unreachable: never = expr;
      return unreachable;
    }
  }
}

/** Names users reach for to make an id: `generateId()` is Reqon's (deterministic on replay). */
const RANDOM_ID_NAMES = new Set(['uuid', 'uuidv4', 'randomuuid', 'guid', 'newid', 'randomid']);

function checkCall(ctx: CheckContext, file: string, call: Extract<Expr, { kind: 'Call' }>): void {
  const name = call.callee?.name;
  if (!name) return;
  const args = call.args ?? [];
  if (!BUILTIN_NAMES.has(name)) {
    const method = methodCallHelp(name);
    if (method !== undefined) {
      ctx.report(file, 'E3019', call.callee, `Method calls (\`${method.receiver}.${method.method}(…)\`) are not supported`, method.help);
    } else {
      const help = RANDOM_ID_NAMES.has(name.toLowerCase())
        ? 'use `generateId()`: an id derived from the run and the step, the same when the run is replayed (a random one would differ on every resume)'
        : didYouMean(name, BUILTIN_NAMES);
      ctx.report(file, 'E3018', call.callee, `Unknown function \`${name}\``, help);
    }
    return;
  }
  const arity = BUILTIN_ARITY[name];
  if (arity && (args.length < arity.min || args.length > arity.max)) {
    ctx.report(
      file,
      'E3020',
      call,
      `\`${name}\` expected ${describeArity(arity)} but got: ${args.length}`,
    );
    return;
  }
  checkFunctionArguments(ctx, file, name, args);
  if (name === 'sync_state.get' && args[0] && args[0].kind !== 'String') {
    ctx.report(
      file,
      'E3021',
      args[0],
      '`sync_state.get` expected a string literal but got: an expression',
      'write the checkpoint key in quotes, e.g. sync_state.get("orders_last_sync"); a run reads its checkpoints before the step',
    );
  }
  if (name === 'env') {
    const arg = args[0];
    if (arg && arg.kind !== 'String') {
      ctx.report(
        file,
        'E3021',
        arg,
        '`env` expected a string literal but got: an expression',
        'write the variable name in quotes, e.g. env("API_TOKEN"); a run must know its inputs before it starts',
      );
    }
  }
}

/**
 * E3056: a lambda is the function argument of `map`, `filter`, `reduce`, `sortBy`, `find` or
 * `findIndex`, with as many parameters as that function passes; `reduce` needs a lambda (its
 * function takes the running value and the item).
 */
function checkFunctionArguments(ctx: CheckContext, file: string, name: string, args: readonly Expr[]): void {
  const wanted = Object.hasOwn(FUNCTION_ARGUMENTS, name) ? FUNCTION_ARGUMENTS[name] : undefined;
  args.forEach((arg, i) => {
    if (arg?.kind !== 'Lambda' || (wanted !== undefined && wanted.index === i)) return;
    const takers = Object.keys(FUNCTION_ARGUMENTS).map((f) => `\`${f}\``).join(', ');
    ctx.report(file, 'E3056', arg, `A function (\`x => …\`) is no argument of \`${name}\` here`, `a function is the second argument of ${takers}; elsewhere write the value itself`);
  });
  const fn = wanted === undefined ? undefined : args[wanted.index];
  if (wanted === undefined || !fn) return;
  if (fn.kind === 'Lambda') {
    const names = (fn.params ?? []).map((param) => param?.name);
    for (const [i, param] of (fn.params ?? []).entries()) {
      if (param?.name === 'response') {
        ctx.report(file, 'E3056', param, 'A parameter cannot be named `response`: `response.x` always reads the last request\'s answer (§D.2), not the parameter', 'name it otherwise: `x => x.id`');
      } else if (param?.name && names.indexOf(param.name) !== i) {
        ctx.report(file, 'E3056', param, `Parameter \`${param.name}\` is given twice`, 'give each parameter its own name: `(total, x) => total + x`');
      }
    }
  }
  if (fn.kind === 'Lambda' && (fn.params?.length ?? 0) !== wanted.params) {
    const form = wanted.params === 2 ? '`(total, x) => total + x`' : '`x => x.total`';
    ctx.report(file, 'E3056', fn, `\`${name}\` calls its function with ${wanted.params === 2 ? 'two values (the running value and the item)' : 'one value (the item)'}, but this one takes ${fn.params?.length ?? 0}`, `write ${form}`);
  } else if (fn.kind !== 'Lambda' && wanted.params === 2) {
    ctx.report(file, 'E3056', fn, `\`${name}\` needs a function of the running value and the item`, 'write `reduce(xs, (total, x) => total + x, 0)`');
  }
}

function describeArity({ min, max }: { min: number; max: number }): string {
  const args = (n: number) => `${n} argument${n === 1 ? '' : 's'}`;
  if (min === max) return args(min);
  if (max === Infinity) return `at least ${args(min)}`;
  return `${min} to ${args(max)}`;
}

/** Words other languages use for a catch-all arm: here a bare name is a value compared with the subject. */
const CATCH_ALL_WORDS = new Set(['else', 'default', 'otherwise']);

function checkMatchExprArms(ctx: CheckContext, file: string, m: Extract<Expr, { kind: 'MatchExpr' }>): void {
  const arms = m.arms ?? [];
  for (const arm of arms) {
    const p = arm?.pattern;
    if (p?.kind !== 'Ref' || p.leadingDot || p.parts?.length !== 1 || !CATCH_ALL_WORDS.has(p.parts[0]!) || arm.guard) continue;
    ctx.report(
      file,
      'E3051',
      p,
      m.guards
        ? // `match { cond => value }` has no subject: each arm is a condition (probe 110 K11: the message spoke of one).
          `\`${p.parts[0]}\` here is no catch-all: each arm of \`match { … }\` is a condition, and this one is the variable \`${p.parts[0]}\` (undefined when none is bound), so the arm is never chosen and the match gives no value when no other holds`
        : `\`${p.parts[0]}\` here is no catch-all: a bare name in an arm is a value compared with the subject (the variable \`${p.parts[0]}\`, undefined when none is bound), so this arm is chosen only when the subject equals it`,
      'write `_ => …` for the arm that matches everything',
    );
  }
  const catchAll = arms.findIndex((a) => a && a.pattern === null && !a.guard);
  if (catchAll >= 0 && catchAll < arms.length - 1) {
    const dead = arms[catchAll + 1]!;
    ctx.report(
      file,
      'E3030',
      dead,
      'This arm can never be chosen: the `_` arm before it matches everything',
      'move the `_` arm last',
    );
  }
}

/**
 * `xs.map(.id)`, `name.toLowerCase()`: upstream's docs write JavaScript-style method calls, which
 * Reqon does not have (a dotted callee is one name). When the last part is a method a user means
 * on a value, say so and give the form that does it here, rather than "unknown function".
 */
function methodCallHelp(callee: string): { receiver: string; method: string; help: string } | undefined {
  const dot = callee.lastIndexOf('.');
  if (dot <= 0) return undefined;
  const receiver = callee.slice(0, dot);
  const method = callee.slice(dot + 1);
  const form = METHOD_FORMS[method];
  if (form !== undefined) return { receiver, method, help: form(receiver) };
  if (BUILTIN_NAMES.has(method)) return { receiver, method, help: `call the built-in with the value first: \`${method}(${receiver}, …)\`` };
  return undefined;
}

/** What to write instead of a method called on `x`. */
const METHOD_FORMS: Readonly<Record<string, (x: string) => string>> = {
  map: (x) => `call the built-in with the list first: \`map(${x}, .field)\` or \`map(${x}, e => e.field)\``,
  forEach: (x) => `loop over it: \`for e in ${x} { … }\``,
  flatMap: (x) => `loop over it: \`for e in ${x} { … }\`; \`flatten(${x})\` joins nested lists`,
  filter: (x) => `call the built-in with the list first: \`filter(${x}, .field == value)\`, or \`${x} where .field == value\``,
  find: (x) => `call the built-in with the list first: \`find(${x}, .field == value)\``,
  some: (x) => `test with \`any of ${x} where .field == value\``,
  every: (x) => `test that none fails: \`length(${x} where not (.field == value)) == 0\``,
  reduce: (x) => `call the built-in with the list first: \`reduce(${x}, (total, e) => total + e.field, 0)\`, or \`sum(${x})\``,
  length: (x) => `use \`length(${x})\``,
  size: (x) => `use \`length(${x})\``,
  count: (x) => `use \`count(${x})\``,
  toLowerCase: (x) => `use \`lowercase(${x})\``,
  toUpperCase: (x) => `use \`uppercase(${x})\``,
  indexOf: (x) => `test membership with \`includes(${x}, value)\` or \`value in ${x}\``,
};

function isLiteralZero(e: Expr): boolean {
  return (e.kind === 'Number' && e.value === 0) || (e.kind === 'Unary' && (e.operator === '-' || e.operator === '+') && isLiteralZero(e.operand));
}

/** `x is T` fails wherever it is evaluated (R4007) unless T is a type `is` knows; a schema is no such type. */
function checkIsType(ctx: CheckContext, file: string, type: Name | undefined): void {
  if (!type?.name || (IS_TYPE_NAMES as readonly string[]).includes(type.name.toLowerCase())) return;
  const help = ctx.schemas.has(type.name)
    ? `\`is\` tests a value's type (${IS_TYPE_NAMES.join(', ')}); to test a record against schema \`${type.name}\`, match it: \`match x { ${type.name} -> … , _ -> … }\``
    : (didYouMean(type.name.toLowerCase(), IS_TYPE_NAMES) ?? `\`is\` knows ${IS_TYPE_NAMES.join(', ')}`);
  ctx.report(file, 'E3053', type, `\`is ${type.name}\` fails wherever it is evaluated: \`${type.name}\` is no type \`is\` knows (R4007)`, help);
}
