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
import { findNodes } from '../lang/node-search.js';
import { didYouMean } from '../lang/suggest.js';
import { OpenApiError, parseOpenApi, specFile, type OpenApiSpec } from './openapi.js';

export function checkOpenApiDocuments(
  unit: MissionUnit,
  read: (file: string) => string = (file) => readFileSync(file, 'utf8'),
  /** Sources whose URL the run is given (`--source NAME=URL`): their base never comes from the document. */
  overridden: ReadonlySet<string> = new Set(),
): Diagnostic[] {
  const mission = unit.mission;
  if (!mission) return [];
  const rootBag = new DiagnosticBag(unit.root.file);
  const calls = (mission.actions ?? []).map((action) => ({ file: action?.file || unit.root.file, calls: callSteps(action?.steps) }));
  const called = new Set(calls.flatMap((a) => a.calls.map((call) => call.source?.name)));
  const specs = new Map<string, OpenApiSpec>();
  const seen = new Set<string>();
  for (const source of mission.sources ?? []) {
    const name = source?.name?.name;
    // A source declared twice is its first declaration (E3035), as the run takes it.
    if (!name || seen.has(name)) continue;
    seen.add(name);
    if (!source.spec?.value) continue;
    const file = specFile(source.spec.value, unit.dir);
    try {
      const spec = parseOpenApi(read(file), file);
      specs.set(name, spec);
      // The base a source without its own takes from the document: relative (`/api/v3`, as many
      // generated documents say) or missing, every request of the source failed when it was sent,
      // after the steps before it had taken effect.
      if (!source.base && !overridden.has(name) && !/^https?:\/\/[^/{}\s]+[^{}\s]*$/i.test(spec.baseUrl ?? '')) {
        rootBag.error(
          'E3062',
          source.spec,
          `Source \`${name}\` has no \`base\`, and its OpenAPI document gives none to take: ${spec.baseUrl === undefined ? 'it has no `servers`' : `its first server URL is \`${spec.baseUrl}\`, ${/[{}]/.test(spec.baseUrl) ? 'with a `{variable}` that has no default' : 'not an absolute http(s) URL'}`}; running it without \`--source ${name}=…\` would fail at its first request`,
          `give the source its own \`base: "https://…"\`, or the run \`--source ${name}=https://…\``,
        );
      }
    } catch (error) {
      const why = error instanceof OpenApiError ? error.message : `cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`;
      // The run reads it only for a `call`, or for the base URL a source without `base` takes from it.
      const needed = called.has(name) || (!source.base && !overridden.has(name));
      rootBag.error(
        needed ? 'E3057' : 'E3059',
        source.spec,
        `The OpenAPI document of source \`${name}\` cannot be used: ${why}`,
        needed ? 'the path is read relative to the mission\'s folder; this source\'s requests fail until it can be' : 'no `call` uses it and the source has its own `base`, so running does not need it; fix the path or remove `from "…"`',
      );
    }
  }
  const bags = new Map<string, DiagnosticBag>([[unit.root.file, rootBag]]);
  for (const { file, calls: steps } of calls) {
    for (const call of steps) {
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
function callSteps(steps: unknown): CallStep[] {
  return findNodes(steps, (node): node is CallStep => (node as { kind?: unknown }).kind === 'Call' && 'operation' in node);
}
