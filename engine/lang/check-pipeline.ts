/**
 * Pipeline checks: every stage names a declared action, and every `jump` lands somewhere the
 * runtime can continue from — the first *sequential* stage of the pipeline that runs (the last
 * `run` line) whose action is the target (§C.8: parallel stages are not jump targets).
 * A detour (`jump A then retry|continue`) runs A in place and comes back, so its target only has
 * to be a declared action — in the pipeline or not (upstream's examples jump to a `RefreshToken`
 * that no stage runs).
 */
import type { MissionDecl, Pipeline } from './ast.js';
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
    }
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
