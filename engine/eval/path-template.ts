/**
 * Fetch path interpolation (§C.1.3, V2): `{x}` and `{x.y.z}` in a string-literal path. The head is
 * a variable in the scope chain (a fetch has no current record, and `response` is not a variable);
 * the rest is walked as fields.
 *
 * Invariants: an unresolved or null placeholder is an error, never an empty segment; every value
 * is `encodeURIComponent`-encoded, so data can never change the shape of the path.
 */
import type { Span } from '../lang/ast.js';
import { PLACEHOLDER } from '../lang/path-placeholders.js';
import { EvaluatorError, NO_SPAN } from './eval-errors.js';
import type { Scope } from './scope.js';
import { describeValue, fieldOf } from './values.js';


/**
 * Fills every placeholder from `scope`; `span` (the path literal's) is where errors point, and
 * `line` (asked only on an error) the request's line, for a message read without the source.
 */
export function interpolatePath(template: string, scope: Scope, span: Span = NO_SPAN, line?: () => number | undefined): string {
  return template.replace(PLACEHOLDER, (_whole, path: string) => {
    const [head, ...rest] = path.split('.');
    let value = scope.get(head!);
    for (const part of rest) value = fieldOf(value, part);
    if (value === undefined || value === null) {
      const why =
        scope.get(head!) === undefined
          ? `no variable \`${head}\` is bound here; bind it before the request in this action, e.g. \`let ${head} = env("${head}")\``
          : `\`${path}\` is ${value === null ? 'null' : 'absent'}`;
      const at = line?.();
      throw new EvaluatorError('R4010', `Path parameter {${path}}${at === undefined ? '' : ` (line ${at})`} did not resolve: ${why}`, span);
    }
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') {
      return encodeURIComponent(String(value));
    }
    throw new EvaluatorError(
      'R4001',
      `Path parameter {${path}} expected a string or a number but got: ${describeValue(value)}`,
      span,
    );
  });
}
