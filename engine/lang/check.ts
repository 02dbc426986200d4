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
  isMissionPart,
  checkSharedTables,
  checkStoreDecl,
  registerNames,
} from './check-declarations.js';
import { checkExpr } from './check-expressions.js';
import { checkJumps, checkPipelines } from './check-pipeline.js';
import { checkAction, type JumpRef } from './check-steps.js';
import type { Diagnostic } from './diagnostics.js';
import type { MissionUnit } from './mission-unit.js';
import type { ActionDecl, MissionDecl, TransformDecl, TypeRef } from './ast.js';
import { SCHEMA_TYPE_NAMES } from './builtin-names.js';
import { didYouMean } from './suggest.js';

export function checkMission(unit: MissionUnit): Diagnostic[] {
  const ctx = new CheckContext(unit);
  const first = checkProgramShape(ctx);
  const mission = unit.mission ?? first;
  if (mission) checkMissionBody(ctx, mission);
  else if (isMissionPart(unit.root)) checkPart(ctx);
  return ctx.diagnostics();
}

/**
 * A folder mission's part checked on its own: everything but the names the mission declares
 * (stores, sources, schemas, other actions), which only the folder can resolve. A warning says
 * so, so that "no errors" is never read as "the names were checked".
 */
function checkPart(ctx: Ctx): void {
  const root = ctx.unit.root;
  const items = root.items ?? [];
  ctx.report(
    root.file,
    'E3034',
    { start: 0, end: 0 },
    `${root.file} has no mission: checked as a part of a folder mission (stores, sources, schemas and other actions it names are not resolved)`,
    'check the folder (`reqon check <folder>`) to resolve them against its mission.vague',
  );
  ctx.part = true;
  const actions = items.filter((i): i is ActionDecl => i?.kind === 'Action');
  // As in the folder (loader.ts): a part holds actions only; a transform belongs in the mission.
  for (const item of items) {
    if (item?.kind !== 'Transform') continue;
    ctx.report(root.file, 'E3031', item.name ?? item, `A folder mission's part may contain only \`action\` declarations, found a transform`, 'move it into the mission in mission.vague');
  }
  registerNames(ctx, 'action', actions, ctx.actions, (a) => a.file || root.file);
  for (const action of actions) checkAction(ctx, action, []);
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
  checkSharedTables(ctx, mission.stores ?? []);
  for (const transform of mission.transforms ?? []) if (transform) checkTransform(ctx, transform);
  for (const schema of mission.schemas ?? []) for (const field of schema?.fields ?? []) if (field?.type) checkFieldType(ctx, field.type);
  checkPipelines(ctx, mission);

  const jumps: JumpRef[] = [];
  for (const action of mission.actions ?? []) if (action) checkAction(ctx, action, jumps);
  checkJumps(ctx, mission, jumps);
}

/** A field type that is no built-in type and no declared schema matches anything (§B.5): a typo's likely. */
function checkFieldType(ctx: Ctx, type: TypeRef): void {
  if (type.kind === 'ArrayType') return checkFieldType(ctx, type.element);
  if (type.kind === 'ObjectType') {
    for (const field of type.fields ?? []) if (field?.type) checkFieldType(ctx, field.type);
    return;
  }
  if (!type.name || (SCHEMA_TYPE_NAMES as readonly string[]).includes(type.name.toLowerCase()) || ctx.schemas.has(type.name)) return;
  const help =
    didYouMean(type.name, [...SCHEMA_TYPE_NAMES, ...ctx.schemas.keys()]) ??
    `a field's type is one of ${SCHEMA_TYPE_NAMES.join(', ')}, a declared schema, or either in brackets for an array; \`any\` matches any value`;
  ctx.report(ctx.rootFile, 'E3054', type, `\`${type.name}\` is no built-in type and no declared schema, so this field matches any value`, help);
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
