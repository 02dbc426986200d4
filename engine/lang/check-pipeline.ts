/**
 * Pipeline checks: every stage names a declared action, and every `jump` lands somewhere the
 * runtime can continue from — the first *sequential* stage of the pipeline that runs (the last
 * `run` line) whose action is the target (§C.8: parallel stages are not jump targets).
 * A detour (`jump A then retry|continue`) runs A in place and comes back, so its target only has
 * to be a declared action — in the pipeline or not (upstream's examples jump to a `RefreshToken`
 * that no stage runs).
 */
import type { Expr, MissionDecl, Pipeline } from './ast.js';
import type { CheckContext } from './check-context.js';
import { checkExpr } from './check-expressions.js';
import type { JumpRef } from './check-steps.js';

export function checkPipelines(ctx: CheckContext, mission: MissionDecl): void {
  const file = ctx.rootFile;
  // Indexed loops: a `run` line may list thousands of stages, and this runs once per check, mostly
  // before V8 optimises it, where each step of a for-of iterator allocates its result object.
  for (const pipeline of mission.pipelines ?? []) {
    const stages = pipeline?.stages ?? [];
    for (let s = 0; s < stages.length; s++) {
      const stage = stages[s];
      const actions = stage?.actions ?? [];
      for (let a = 0; a < actions.length; a++) {
        const name = actions[a];
        if (!name?.name || ctx.actions.has(name.name) || ctx.part) continue;
        if (ctx.unit.folder) {
          ctx.unknown(file, 'E3010', 'action', name, ctx.actions.keys()); // upstream's folder loader refuses it too
        } else {
          // A single file: upstream accepts it (reference §B.2); the run fails at this stage.
          const help = ctx.nameHelp('action', name, ctx.actions.keys());
          ctx.report(file, 'E3036', name, `Unknown action \`${name.name}\`: running the mission fails at this stage`, help);
        }
      }
      checkExpr(ctx, file, stage?.condition);
      if (stage?.condition && !ctx.part) warnConditionNames(ctx, file, stage.condition);
    }
  }
}

/**
 * E3066: a bare name in a stage's condition that names no store. The condition is evaluated
 * before its stage, with no variables and no response, so such a name — a misspelt store
 * (`length(ordrs) > 0`), a `let` of an action — is absent, the condition false, and the stage
 * skipped with the run completing (helper 79). Only where the name is read as a value: not inside
 * a `where`, a lambda, a match or a call's later arguments, where a name may be a record's field.
 */
function warnConditionNames(ctx: CheckContext, file: string, expr: Expr): void {
  switch (expr.kind) {
    case 'Ref': {
      const name = expr.parts?.[0];
      if (expr.leadingDot || !name || name === 'response' || ctx.stores.has(name)) return;
      ctx.report(
        file,
        'E3066',
        expr,
        `\`${name}\` is no store, and a stage's condition has no variables (it is evaluated before the stage runs): \`${name}\` is absent there`,
        ctx.nameHelp('store', { name, start: expr.start, end: expr.end }, ctx.stores.keys()) ?? 'a condition reads stores: write the store the stage depends on',
      );
      return;
    }
    case 'Member':
      return warnConditionNames(ctx, file, expr.object);
    case 'Index':
      warnConditionNames(ctx, file, expr.object);
      return warnConditionNames(ctx, file, expr.index);
    case 'Call':
      if (expr.args?.[0]) warnConditionNames(ctx, file, expr.args[0]);
      return;
    case 'Unary':
      return warnConditionNames(ctx, file, expr.operand);
    case 'Binary':
      warnConditionNames(ctx, file, expr.left);
      return warnConditionNames(ctx, file, expr.right);
    case 'Conditional':
      warnConditionNames(ctx, file, expr.test);
      warnConditionNames(ctx, file, expr.consequent);
      return warnConditionNames(ctx, file, expr.alternate);
    default:
      return;
  }
}

export function checkJumps(ctx: CheckContext, mission: MissionDecl, jumps: readonly JumpRef[]): void {
  const pipelines = mission.pipelines ?? [];
  const running: Pipeline | undefined = pipelines[pipelines.length - 1];
  const sequential = new Set<string>();
  const parallel = new Set<string>();
  const stages = running?.stages ?? [];
  for (let s = 0; s < stages.length; s++) {
    const stage = stages[s]!;
    const actions = stage?.actions ?? [];
    for (let a = 0; a < actions.length; a++) {
      const name = actions[a];
      if (name?.name) (stage.parallel ? parallel : sequential).add(name.name);
    }
  }
  for (const { action, file, detour } of jumps) {
    const target = action.name;
    if (!ctx.actions.has(target)) {
      ctx.unknown(file, 'E3010', 'action', action, ctx.actions.keys());
      continue;
    }
    if (detour || !running || sequential.has(target)) continue;
    if (parallel.has(target)) {
      ctx.report(
        file,
        'E3011',
        action,
        `Cannot jump to \`${target}\`: it runs only in a parallel stage`,
        `give \`${target}\` a stage of its own in the \`run\` line (parallel stages are not jump targets)`,
      );
    } else {
      ctx.report(
        file,
        'E3012',
        action,
        `Cannot jump to \`${target}\`: it is not a stage of the \`run\` pipeline`,
        `add \`${target}\` to the \`run\` line, or come back after it: \`jump ${target} then retry\``,
      );
    }
  }
}
