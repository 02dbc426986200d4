/**
 * What a mission is refused for before a run of it sends anything, beyond failing its checks:
 * what `reqon check` only warns about (upstream accepts it) but a run would certainly fail on
 * after earlier steps took effect. Asked of a run started by hand (run-start.ts) and of an edited
 * mission a run is to carry on with, a fork to start from, or a verify to compare (verify.ts): an
 * edit `reqon run` refuses is refused there too, not sent up to where it fails (helper 85).
 */
import { readFileSync } from 'node:fs';
import { checkOpenApiDocuments } from '../http/openapi-check.js';
import { spanOf } from '../lang/ast.js';
import type { Diagnostic } from '../lang/diagnostics.js';
import { formatDiagnostics } from '../lang/format.js';
import { didYouMean } from '../lang/suggest.js';
import type { RunOptions } from '../log/log.js';
import type { MissionModel } from '../steps/mission-model.js';
import { MissionInvalidError } from './mission-cache.js';

/** Throws MissionInvalidError (exit 2) for a mission a run would certainly fail on; `options` gives the run's sources. */
export function refuseUnstartableMission(model: MissionModel, options: RunOptions): void {
  refuseUndeclaredStages(model);
  refuseUnusableSpecs(model, options);
}

/**
 * A stage with no condition that names an undeclared action (a warning to `reqon check`, E3036,
 * as upstream accepts it) fails the run there, after every stage before it has had its effects:
 * refused before any of them. A stage behind a condition may never run, and is left to fail if it does.
 */
function refuseUndeclaredStages(model: MissionModel): void {
  const file = model.unit.root.file;
  const found: Diagnostic[] = [];
  for (const stage of model.pipeline?.stages ?? []) {
    if (stage.condition) continue;
    for (const name of stage.actions) {
      if (model.actions.has(name.name)) continue;
      const help = didYouMean(name.name, model.actions.keys());
      found.push({
        code: 'E3036',
        severity: 'error',
        message: `Unknown action \`${name.name}\`: the run would fail at this stage after the stages before it had their effects, so it is not started`,
        file,
        span: spanOf(name),
        ...(help ? { help } : {}),
      });
    }
  }
  if (found.length > 0) throw new MissionInvalidError(formatDiagnostics(found, new Map(model.unit.files.map((f) => [f.path, f.text]))));
}

/**
 * A source's OpenAPI document that cannot be used, or a `call` of an operation it lacks
 * (http/openapi-check.ts), refuses the run before it starts — as `reqon check` says — rather than
 * failing it at that call after the steps before it took effect. Read as the run reads it: the
 * text the run remembers, else the file.
 */
function refuseUnusableSpecs(model: MissionModel, options: RunOptions): void {
  if (!model.mission.sources.some((s) => s.spec)) return;
  const read = (file: string): string => model.attachment(file) ?? readFileSync(file, 'utf8');
  // E3062 (no base to take) is a warning for `reqon check`, which cannot know the run's --source;
  // here the run's sources are known, so it is what it then is: every request of the source failing.
  const errors = checkOpenApiDocuments(model.unit, read, new Set(Object.keys(options.sources ?? {})))
    .map((d) => (d.code === 'E3062' ? { ...d, severity: 'error' as const } : d))
    .filter((d) => d.severity === 'error');
  if (errors.length === 0) return;
  throw new MissionInvalidError(formatDiagnostics(errors, new Map(model.unit.files.map((f) => [f.path, f.text]))));
}
