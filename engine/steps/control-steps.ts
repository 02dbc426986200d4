/**
 * Pure and control-flow steps: `let`, `map`, `apply`, `validate`, `match` (§C.3–§C.5, §C.7, §C.8).
 * They compute from recorded inputs only, so on replay they simply run again; what they produce
 * for the inspector (`response`, a binding) travels in `step.completed`.
 */
import { EvaluatorError } from '../eval/eval-errors.js';
import type { ApplyStep, Directive, Expr, FlowStep, LetStep, MapStep, MatchArm, MatchStep, ValidateStep } from '../lang/ast.js';
import { evaluate } from '../eval/evaluate.js';
import { evaluateFieldMap, applyTransform, mappingContext } from '../eval/transform.js';
import { matchesSchema, matchesSchemaArray } from '../eval/schema-match.js';
import { matchesObjectPattern } from '../eval/object-pattern.js';
import { withRecord, type Scope } from '../eval/scope.js';
import { describeValue, displayString, isTruthy } from '../eval/values.js';
import { armPath, fallbackPath } from '../journal/step-path.js';
import { AbortError, JumpSignal, RetrySignal, SkipSignal, StepError } from './signals.js';
import { evalContext, type Frame, type StepOutcome, type StepRuntime } from './step-runtime.js';
import { queueValue } from './store-step.js';
import { QUEUE_DIRECTIVE_OCCURRENCE_FORMAT } from '../log/events.js';
import { namePatternBinds, spanOf } from '../lang/ast.js';


export function runLet(step: LetStep, path: string, frame: Frame, rt: StepRuntime): StepOutcome {
  const value = evaluate(step.value, evalContext(rt, frame, path));
  frame.scope.let(step.name.name, value);
  return { bind: { name: step.name.name, value } };
}

export function runMap(step: MapStep, path: string, frame: Frame, rt: StepRuntime): StepOutcome {
  const ctx = evalContext(rt, frame, path);
  const source = evaluate(step.source, ctx);
  // Of null or absent, only a read of a field of it fails: a map of variables and aggregates
  // builds its record (upstream's missions map `response` in actions that made no request).
  frame.response = evaluateFieldMap(step.fields, mappingContext(ctx, source, step.source));
  return { response: frame.response };
}

export function runApply(step: ApplyStep, path: string, frame: Frame, rt: StepRuntime): StepOutcome {
  const transform = rt.model.transforms.get(step.transform.name);
  if (!transform) throw new StepError('unknown-transform', `transform \`${step.transform.name}\` is not declared in this mission`);
  const ctx = evalContext(rt, frame, path);
  const value = evaluate(step.target, ctx);
  const result = applyTransform(transform, value, ctx, rt.model.schemas, (message) => rt.progress(`warning: ${message}`), step.target);
  if (step.as) {
    frame.scope.set(step.as.name, result);
    return { bind: { name: step.as.name, value: result } };
  }
  frame.response = result;
  return { response: result };
}

export async function runValidate(step: ValidateStep, path: string, frame: Frame, rt: StepRuntime, file: string): Promise<StepOutcome> {
  if (step.fallback) {
    const failed = firstFailedConstraint(step, path, frame, rt, true);
    if (failed?.error) {
      const { constraint, target, error } = failed;
      rt.progress(
        `validate at ${path}: \`${rt.model.text(file, spanOf(constraint.condition))}\` (line ${rt.model.line(file, constraint.start)}) ` +
          `could not be evaluated for ${recordText(target)} (${error.message}), so the record failed validation: its \`or\` block runs`,
      );
    }
    if (failed) await withFlowSubject(frame, failed.target, () => rt.runSteps(step.fallback!, fallbackPath(path), frame));
    return {};
  }
  return runValidateWithoutFallback(step, path, frame, rt, file);
}

/** A `validate` without a fallback is synchronous: it passes, or throws `validation-failed`. */
export function runValidateWithoutFallback(step: ValidateStep, path: string, frame: Frame, rt: StepRuntime, file: string): StepOutcome {
  const failed = firstFailedConstraint(step, path, frame, rt);
  if (failed) {
    const { constraint, target, checked } = failed;
    throw new StepError(
      'validation-failed',
      `Validation failed: \`${rt.model.text(file, spanOf(constraint.condition))}\` (line ${rt.model.line(file, constraint.start)}) is false` +
        operandValues(constraint.condition, checked, rt, file) +
        ` for ${recordText(target)}`,
    );
  }
  return {};
}

interface FailedConstraint {
  constraint: ValidateStep['constraints'][number];
  /** The validated value (`validate order { … }`: the order). */
  target: unknown;
  checked: ReturnType<typeof evalContext>;
  /** The assumption could not be evaluated (`.price > 0` with price "10"): why. */
  error?: EvaluatorError;
}

/**
 * The first assumption the validated value fails. With `unevaluable`, one that cannot even be
 * evaluated for it (a type error, a division by zero) is failed too — the `or` block's record,
 * not a failure of the step that left the record nowhere; without (no `or` block), the step fails
 * with the evaluation error, which says more than "is false". The target itself must evaluate.
 */
function firstFailedConstraint(step: ValidateStep, path: string, frame: Frame, rt: StepRuntime, unevaluable = false): FailedConstraint | undefined {
  const ctx = evalContext(rt, frame, path);
  const target = evaluate(step.target, ctx);
  const checked = withRecord(ctx, target);
  for (const constraint of step.constraints) {
    let holds: unknown;
    try {
      holds = evaluate(constraint.condition, checked);
    } catch (error) {
      if (unevaluable && error instanceof EvaluatorError) return { constraint, target, checked, error };
      throw error;
    }
    if (!isTruthy(holds)) return { constraint, target, checked };
  }
  return undefined;
}

/** What the non-literal sides of a failed comparison were: ": `.qty` is number (-1)". */
function operandValues(condition: Expr, checked: FailedConstraint['checked'], rt: StepRuntime, file: string): string {
  if (condition.kind !== 'Binary') return '';
  const parts: string[] = [];
  for (const side of [condition.left, condition.right]) {
    if (side.kind === 'Number' || side.kind === 'String' || side.kind === 'Boolean' || side.kind === 'Null') continue;
    let value: unknown;
    try {
      value = evaluate(side, checked);
    } catch {
      continue; // the condition itself evaluated, so a side that throws alone is not worth naming
    }
    parts.push(`\`${rt.model.text(file, spanOf(side))}\` is ${describeValue(value)}`);
  }
  return parts.length === 0 ? '' : `: ${parts.join(', ')}`;
}

/** The validated value, named by its id where it has one, so the failing record can be found. */
function recordText(target: unknown): string {
  const id = (target as { id?: unknown } | null)?.id;
  const named = typeof id === 'string' || typeof id === 'number' ? `the record with id ${JSON.stringify(id)}: ` : '';
  return named + describeValue(target);
}

export async function runMatch(step: MatchStep, path: string, frame: Frame, rt: StepRuntime): Promise<StepOutcome> {
  const ctx = evalContext(rt, frame, path);
  const subject = evaluate(step.subject, ctx);
  for (let i = 0; i < step.arms.length; i++) {
    const arm = step.arms[i]!;
    let bound: Map<string, unknown> | undefined;
    if (arm.pattern.kind === 'ObjectPattern') {
      bound = new Map();
      if (!matchesObjectPattern(arm.pattern, subject, bound, undefined, rt.model.schemas)) continue;
    } else if (namePatternBinds(arm.pattern, rt.model.schemas)) {
      const one = arm.pattern.kind === 'SchemaPattern' ? [subject] : Array.isArray(subject) && subject.length === 1 ? subject : undefined;
      if (one === undefined) continue;
      bound = new Map([[arm.pattern.schema.name, one[0]]]);
    } else if (!armMatches(arm, subject, frame, rt)) continue;
    if (arm.guard) {
      // The guard sees the arm's bindings; they become the action's variables only if it holds.
      const guardCtx = withRecord(bound?.size ? { ...ctx, scope: withBindings(frame.scope.child(), bound) } : ctx, subject);
      if (!isTruthy(evaluate(arm.guard, guardCtx))) continue;
    }
    if (bound) withBindings(frame.scope, bound);
    warnListPassedSchemaArms(step, i, subject, path, rt);
    if (arm.body.kind === 'Steps') {
      const steps = arm.body.steps;
      await withFlowSubject(frame, subject, () => rt.runSteps(steps, armPath(path, i), frame));
      return {};
    }
    await directive(arm.body.directive, subject, armPath(path, i), frame, rt);
    return {};
  }
  // V2: a match of status arms only lets every other status through.
  if (step.arms.every((arm) => arm.pattern.kind === 'StatusPattern' || arm.pattern.kind === 'StatusListPattern')) return {};
  throw new StepError('no-match', `No matching arm in \`match\` for ${describeForMatch(subject)}`);
}

/**
 * A list answer that went past a schema arm to a later one (`GitHubPR -> { store … }` then
 * `_ -> skip`, as upstream's github-sync writes it): a schema arm matches one record, so every
 * record was dropped without a word. Said, with the arm that matches a list of them.
 */
function warnListPassedSchemaArms(step: MatchStep, chosen: number, subject: unknown, path: string, rt: StepRuntime): void {
  if (!Array.isArray(subject) || subject.length === 0) return;
  // Only a catch-all or a status arm taking the list says that the schema arm was meant for it.
  const taken = step.arms[chosen]!.pattern.kind;
  if (taken !== 'Wildcard' && taken !== 'StatusPattern' && taken !== 'StatusListPattern') return;
  const passed = step.arms.slice(0, chosen).flatMap((a) => (a.pattern.kind === 'SchemaPattern' && rt.model.schemas.has(a.pattern.schema.name) ? [a.pattern.schema.name] : []));
  if (passed.length === 0) return;
  const name = passed[0]!;
  rt.progress(
    `warning: ${path}: the answer is a list of ${subject.length}, which no schema arm takes: \`${name} ->\` matches a single record; \`[${name}] ->\` matches a list of them`,
  );
}

function armMatches(arm: MatchArm, subject: unknown, frame: Frame, rt: StepRuntime): boolean {
  const pattern = arm.pattern;
  switch (pattern.kind) {
    case 'Wildcard':
      return true;
    case 'StatusPattern':
      return frame.lastStatus === pattern.status;
    case 'StatusListPattern':
      return pattern.statuses.some((s) => s.status === frame.lastStatus);
    case 'SchemaPattern': {
      const schema = rt.model.schemas.get(pattern.schema.name);
      return schema !== undefined && matchesSchema(subject, schema, rt.model.schemas);
    }
    case 'SchemaArrayPattern': {
      const schema = rt.model.schemas.get(pattern.schema.name);
      return schema !== undefined && matchesSchemaArray(subject, schema, rt.model.schemas);
    }
    case 'EmptyArrayPattern':
      return Array.isArray(subject) && subject.length === 0;
    case 'ObjectPattern':
      return matchesObjectPattern(pattern, subject, new Map(), undefined, rt.model.schemas);
  }
}

function withBindings(scope: Scope, bound: ReadonlyMap<string, unknown>): Scope {
  for (const [name, value] of bound) scope.bind(name, value);
  return scope;
}

/**
 * A directive written as a step (`skip` in a loop body, `abort "…"` after a store in an arm
 * block): the same meaning as the directive as an arm body. `queue` queues the value the block
 * is about — in a `validate x { … } or { … }` block the validated `x`, in a match arm's block
 * the matched value — unless a step of the block has set `response` since (`map`, a request):
 * then, as everywhere else, the current `response`. `continue` carries on with the next step.
 */
export async function runFlow(step: FlowStep, path: string, frame: Frame, rt: StepRuntime): Promise<StepOutcome> {
  const about = frame.flowSubject;
  await directive(step.directive, about && frame.response === about.responseAtEntry ? about.value : frame.response, path, frame, rt);
  return {};
}

/** Runs a validate fallback or an arm block with `subject` as its directives' value (Frame.flowSubject). */
async function withFlowSubject(frame: Frame, subject: unknown, run: () => Promise<void> | undefined): Promise<void> {
  const outer = frame.flowSubject;
  frame.flowSubject = { value: subject, responseAtEntry: frame.response };
  try {
    await run();
  } finally {
    frame.flowSubject = outer;
  }
}

async function directive(d: Directive, subject: unknown, path: string, frame: Frame, rt: StepRuntime): Promise<void> {
  switch (d.kind) {
    case 'Continue':
      return;
    case 'Skip':
      throw new SkipSignal('skipped');
    case 'Abort': {
      const message = d.messageExpr ? displayString(evaluate(d.messageExpr, withRecord(evalContext(rt, frame, path), subject))) : d.message?.value;
      throw new AbortError(message || 'Execution aborted');
    }
    case 'Retry':
      throw new RetrySignal(d.config, d.start);
    case 'Queue':
      if (d.store) {
        // `queue S { item: …, key: … }`: the record (default: the matched value), evaluated with the
        // matched value as the current record; the key with the queued record as it.
        const ctx = d.item || d.key ? evalContext(rt, frame, path) : undefined;
        const item = d.item ? evaluate(d.item, withRecord(ctx!, subject)) : subject;
        // Equal items of a loop failing are as many dead letters as failures, as `onError queue` keeps them (probe 110 K2; log format 10).
        const occurrence = rt.http.logFormat >= QUEUE_DIRECTIVE_OCCURRENCE_FORMAT ? (frame.occurrence?.() ?? 1) : 1;
        await queueValue(d.store.name, item, path, frame, rt, d.key ? (record) => evaluate(d.key!, { ...ctx!, current: record }) : undefined, occurrence);
      } else rt.progress(`queue without a target: the matched value was discarded (${path})`);
      throw new SkipSignal('queued');
    case 'Jump':
      throw new JumpSignal(d.action.name, d.then, d.start);
  }
}

function describeForMatch(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  if (Array.isArray(value)) return `an array of ${value.length}`;
  if (typeof value === 'object') return `an object with fields ${Object.keys(value).slice(0, 6).join(', ') || '(none)'}`;
  return `${typeof value} ${JSON.stringify(value)}`.slice(0, 80);
}
