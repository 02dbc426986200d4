/**
 * The checks `reqon check` makes by reading the OpenAPI documents a mission's sources name
 * (`source S from "spec.yaml"`), which the static checker (pure, no I/O) cannot: a document that
 * cannot be read or is no OpenAPI 3 document (E3057), and a `call S.operation` whose document has
 * no such operationId (E3058, with the close one). Without them such a mission checked clean and
 * every run failed at its first call.
 */
import { readFileSync } from 'node:fs';
import type { CallStep } from '../lang/ast.js';
import { DiagnosticBag, type Diagnostic } from '../lang/diagnostics.js';
import type { MissionUnit } from '../lang/mission-unit.js';
import { didYouMean } from '../lang/suggest.js';
import { OpenApiError, parseOpenApi, specFile, type OpenApiSpec } from './openapi.js';

export function checkOpenApiDocuments(unit: MissionUnit, read: (file: string) => string = (file) => readFileSync(file, 'utf8')): Diagnostic[] {
  const mission = unit.mission;
  if (!mission) return [];
  const rootBag = new DiagnosticBag(unit.root.file);
  const specs = new Map<string, OpenApiSpec>();
  for (const source of mission.sources ?? []) {
    if (!source?.spec?.value || !source.name?.name) continue;
    const file = specFile(source.spec.value, unit.dir);
    try {
      specs.set(source.name.name, parseOpenApi(read(file), file));
    } catch (error) {
      const why = error instanceof OpenApiError ? error.message : `cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`;
      rootBag.error('E3057', source.spec, `The OpenAPI document of source \`${source.name.name}\` cannot be used: ${why}`, 'the path is read relative to the mission\'s folder; every `call` of this source fails until it can be');
    }
  }
  const bags = new Map<string, DiagnosticBag>([[unit.root.file, rootBag]]);
  for (const action of mission.actions ?? []) {
    const file = action?.file || unit.root.file;
    for (const call of callSteps(action?.steps)) {
      const spec = specs.get(call.source?.name ?? '');
      const operation = call.operation?.name;
      if (!spec || !operation || spec.operations.has(operation)) continue;
      const known = [...spec.operations.keys()];
      const help = didYouMean(operation, known) ?? (known.length > 0 ? `its operations: ${known.slice(0, 12).join(', ')}${known.length > 12 ? ', …' : ''}` : 'the document declares no operationId');
      if (!bags.has(file)) bags.set(file, new DiagnosticBag(file));
      bags.get(file)!.error('E3058', call.operation, `${spec.file} has no operation \`${operation}\``, help);
    }
  }
  return [...bags.values()].flatMap((bag) => bag.items);
}

/** Every `call S.op` step in `steps`, nested ones (loop bodies, match arms, fallbacks) included. */
function callSteps(node: unknown, out: CallStep[] = []): CallStep[] {
  if (node === null || typeof node !== 'object') return out;
  if (Array.isArray(node)) {
    for (const item of node) callSteps(item, out);
    return out;
  }
  const step = node as { kind?: unknown; operation?: unknown };
  if (step.kind === 'Call' && step.operation !== undefined) out.push(node as CallStep);
  for (const value of Object.values(node)) callSteps(value, out);
  return out;
}
