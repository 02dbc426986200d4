/**
 * Static checks of a loaded mission (`reqon check`, and before every run): names resolve,
 * declarations are unique, values are in range, each finding an E3xxx diagnostic with a span and,
 * where one is close, a "did you mean" help. The areas live in check-*.ts; this file orders them.
 *
 * Invariant: checks never throw, however broken the AST a recovering parser hands over (missing
 * names are skipped: the parser has already reported them).
 */
import type { CheckContext as Ctx } from './check-context.js';
import { CheckContext } from './check-context.js';
import {
  checkMissionItems,
  checkProgramShape,
  checkSourceDecl,
  checkStoreDecl,
  registerNames,
} from './check-declarations.js';
import { checkExpr } from './check-expressions.js';
import { checkJumps, checkPipelines } from './check-pipeline.js';
import { checkAction, type JumpRef } from './check-steps.js';
import type { Diagnostic } from './diagnostics.js';
import type { MissionUnit } from './mission-unit.js';
import type { MissionDecl, TransformDecl } from './ast.js';

export function checkMission(unit: MissionUnit): Diagnostic[] {
  const ctx = new CheckContext(unit);
  const first = checkProgramShape(ctx);
  const mission = unit.mission ?? first;
  if (mission) checkMissionBody(ctx, mission);
  return ctx.diagnostics();
}

function checkMissionBody(ctx: Ctx, mission: MissionDecl): void {
  const root = ctx.rootFile;
  const inRoot = () => root;
  registerNames(ctx, 'source', mission.sources ?? [], ctx.sources, inRoot);
  registerNames(ctx, 'store', mission.stores ?? [], ctx.stores, inRoot);
  registerNames(ctx, 'schema', mission.schemas ?? [], ctx.schemas, inRoot);
  registerNames(ctx, 'transform', mission.transforms ?? [], ctx.transforms, inRoot);
  registerNames(ctx, 'action', mission.actions ?? [], ctx.actions, (a) => a.file || root);

  checkMissionItems(ctx, mission);
  for (const source of mission.sources ?? []) if (source) checkSourceDecl(ctx, source);
  for (const store of mission.stores ?? []) if (store) checkStoreDecl(ctx, store);
  for (const transform of mission.transforms ?? []) if (transform) checkTransform(ctx, transform);
  checkPipelines(ctx, mission);

  const jumps: JumpRef[] = [];
  for (const action of mission.actions ?? []) if (action) checkAction(ctx, action, jumps);
  checkJumps(ctx, mission, jumps);
}

function checkTransform(ctx: Ctx, transform: TransformDecl): void {
  const file = ctx.rootFile;
  for (const variant of transform.variants ?? []) {
    if (!variant) continue;
    const schema = variant.sourceSchema;
    if (schema?.name && schema.name !== '_' && !ctx.schemas.has(schema.name)) {
      ctx.unknown(file, 'E3014', 'schema', schema, ctx.schemas.keys());
    }
    checkExpr(ctx, file, variant.guard);
    for (const f of variant.fields ?? []) checkExpr(ctx, file, f?.value);
  }
}
