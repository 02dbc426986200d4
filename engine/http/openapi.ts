/**
 * OpenAPI 3 documents for `source S from "spec.yaml"` and `call S.operationId` (§C.1.1, §B.3).
 *
 * Loads YAML or JSON from a path relative to the mission folder, indexes operations by
 * `operationId`, derives the base URL from `servers[0].url` (filling `{var}` defaults), finds the
 * 2xx JSON response schema, makes deterministic mock values for dry runs, and validates responses
 * (mismatches are returned as strings: logged, not fatal).
 *
 * Invariants: no network and no other files — any `$ref` that does not start with `#` is rejected
 * at load time (the original fetched external refs: an SSRF); recursive schemas are bounded by a
 * depth limit; the same schema always gives the same mock.
 */

import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import { createRequire } from 'node:module';
import type { HttpMethod } from '../lang/ast.js';

/** `yaml` is loaded when a YAML document is read: most missions have none, and it costs start-up. */
function parseYaml(text: string): unknown {
  const { parse } = createRequire(import.meta.url)('yaml') as typeof import('yaml');
  return parse(text);
}

export type Schema = Record<string, unknown>;

export interface Operation {
  operationId: string;
  method: HttpMethod;
  /** As written in the document, e.g. `/pets/{petId}`. */
  pathTemplate: string;
  /** Names of the `{param}` placeholders in the path, in order. */
  pathParams: string[];
  /** The 2xx JSON response schema, when the document has one. */
  responseSchema?: Schema;
}

export interface OpenApiSpec {
  file: string;
  document: Record<string, unknown>;
  /** From `servers[0].url` with `{var}` defaults filled; may be relative (`/api`). */
  baseUrl?: string;
  operations: Map<string, Operation>;
}

export class OpenApiError extends Error {
  readonly code = 'openapi';
  constructor(message: string) {
    super(message);
    this.name = 'OpenApiError';
  }
}

const METHODS: HttpMethod[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];
const MAX_DEPTH = 32;

/** Where `specPath` (relative to the mission's folder, or absolute) is. */
export function specFile(specPath: string, missionDir: string): string {
  return isAbsolute(specPath) ? specPath : resolve(missionDir, specPath);
}

/** Reads `specPath` (relative to the mission's folder, or absolute) and parses it. */
export function loadOpenApi(specPath: string, missionFile: string): OpenApiSpec {
  const file = specFile(specPath, dirname(missionFile));
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new OpenApiError(`cannot read OpenAPI document ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  return parseOpenApi(text, file);
}

export function parseOpenApi(text: string, file: string): OpenApiSpec {
  let doc: unknown;
  try {
    doc = file.endsWith('.json') ? JSON.parse(text) : parseYaml(text);
  } catch (err) {
    throw new OpenApiError(`${file}: not valid ${file.endsWith('.json') ? 'JSON' : 'YAML'}: ${(err as Error).message.split('\n')[0]}`);
  }
  if (!isObject(doc)) throw new OpenApiError(`${file}: expected an OpenAPI document (an object) at the top level`);
  const version = doc['openapi'];
  if (typeof version !== 'string' || !version.startsWith('3.')) {
    throw new OpenApiError(`${file}: only OpenAPI 3.x documents are supported (found openapi: ${JSON.stringify(version ?? doc['swagger'] ?? null)})`);
  }
  checkRefs(doc, file, '#');
  const spec: OpenApiSpec = { file, document: doc, operations: new Map() };
  const base = serverUrl(doc);
  if (base !== undefined) spec.baseUrl = base;

  const paths = doc['paths'];
  if (paths !== undefined && !isObject(paths)) throw new OpenApiError(`${file}: "paths" must be an object`);
  for (const [pathTemplate, item] of Object.entries(paths ?? {})) {
    if (!isObject(item)) continue;
    for (const method of METHODS) {
      const op = item[method.toLowerCase()];
      if (!isObject(op) || typeof op['operationId'] !== 'string') continue;
      const operationId = op['operationId'];
      if (spec.operations.has(operationId)) {
        throw new OpenApiError(`${file}: operationId "${operationId}" is used twice; operation ids must be unique`);
      }
      const operation: Operation = {
        operationId,
        method,
        pathTemplate,
        pathParams: [...pathTemplate.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!),
      };
      const schema = responseSchemaOf(spec, op);
      if (schema) operation.responseSchema = schema;
      spec.operations.set(operationId, operation);
    }
  }
  return spec;
}

export function resolveOperation(spec: OpenApiSpec, operationId: string): Operation {
  const op = spec.operations.get(operationId);
  if (op) return op;
  const known = [...spec.operations.keys()];
  const close = known.find((k) => k.toLowerCase() === operationId.toLowerCase()) ?? nearest(operationId, known);
  const hint = close ? `; did you mean "${close}"?` : known.length ? `; known operations: ${known.join(', ')}` : '';
  throw new OpenApiError(`${spec.file} has no operation "${operationId}"${hint}`);
}

/** Follows `$ref`s (internal only) until a concrete schema. */
export function deref(spec: OpenApiSpec, schema: unknown, depth = 0): Schema | undefined {
  if (!isObject(schema)) return undefined;
  const ref = schema['$ref'];
  if (typeof ref !== 'string') return schema;
  if (depth > MAX_DEPTH) throw new OpenApiError(`${spec.file}: $ref chain too deep at ${ref}`);
  return deref(spec, pointer(spec, ref), depth + 1);
}

function pointer(spec: OpenApiSpec, ref: string): unknown {
  if (!ref.startsWith('#')) throw new OpenApiError(`${spec.file}: external $ref "${ref}" is not allowed`);
  let cur: unknown = spec.document;
  for (const raw of ref.slice(1).split('/').filter((p) => p !== '')) {
    const part = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    if (!isObject(cur) && !Array.isArray(cur)) throw new OpenApiError(`${spec.file}: $ref "${ref}" does not resolve`);
    cur = (cur as Record<string, unknown>)[part];
    if (cur === undefined) throw new OpenApiError(`${spec.file}: $ref "${ref}" does not resolve`);
  }
  return cur;
}

/** A deterministic value matching `schema`: example/default/first enum value, else a type-based placeholder. */
export function mockFromSchema(spec: OpenApiSpec, schema: unknown, depth = 0): unknown {
  const s = deref(spec, schema);
  if (!s || depth > 8) return null;
  if (s['example'] !== undefined) return s['example'];
  if (s['default'] !== undefined) return s['default'];
  if (Array.isArray(s['enum']) && s['enum'].length > 0) return s['enum'][0];
  if (Array.isArray(s['allOf'])) {
    const parts = s['allOf'].map((p) => mockFromSchema(spec, p, depth + 1));
    return parts.every(isObject) ? Object.assign({}, ...parts) : parts[0] ?? null;
  }
  for (const key of ['oneOf', 'anyOf'] as const) {
    const alts = s[key];
    if (Array.isArray(alts) && alts.length > 0) return mockFromSchema(spec, alts[0], depth + 1);
  }
  const type = primaryType(s);
  switch (type) {
    case 'string':
      return mockString(s['format']);
    case 'integer':
    case 'number':
      return typeof s['minimum'] === 'number' ? s['minimum'] : 0;
    case 'boolean':
      return false;
    case 'null':
      return null;
    case 'array':
      return depth >= 8 ? [] : [mockFromSchema(spec, s['items'], depth + 1)];
    case 'object': {
      const out: Record<string, unknown> = {};
      const props = isObject(s['properties']) ? s['properties'] : {};
      for (const [name, sub] of Object.entries(props)) out[name] = mockFromSchema(spec, sub, depth + 1);
      return out;
    }
    default:
      return null;
  }
}

function mockString(format: unknown): string {
  switch (format) {
    case 'date-time':
      return '1970-01-01T00:00:00.000Z';
    case 'date':
      return '1970-01-01';
    case 'uuid':
      return '00000000-0000-4000-8000-000000000000';
    case 'email':
      return 'user@example.com';
    case 'uri':
    case 'url':
      return 'http://example.com/';
    default:
      return 'string';
  }
}

/** Mismatches between `value` and `schema`, each as `path: expected X but got: Y`; [] when it fits. */
export function validateAgainstSchema(spec: OpenApiSpec, value: unknown, schema: unknown, path = '$', depth = 0): string[] {
  const s = deref(spec, schema);
  if (!s) return [];
  if (depth > MAX_DEPTH * 4) return [`${path}: value nested too deeply to validate`];
  const errors: string[] = [];
  if (value === null && (s['nullable'] === true || typeList(s).includes('null'))) return [];
  if (Array.isArray(s['allOf'])) for (const sub of s['allOf']) errors.push(...validateAgainstSchema(spec, value, sub, path, depth + 1));
  for (const key of ['oneOf', 'anyOf'] as const) {
    const alts = s[key];
    if (Array.isArray(alts) && alts.length > 0 && !alts.some((a) => validateAgainstSchema(spec, value, a, path, depth + 1).length === 0)) {
      errors.push(`${path}: matches none of the ${key} alternatives (got: ${describe(value)})`);
    }
  }
  if (Array.isArray(s['enum']) && !s['enum'].some((e) => JSON.stringify(e) === JSON.stringify(value))) {
    errors.push(`${path}: expected one of ${s['enum'].map((e) => JSON.stringify(e)).join(', ')} but got: ${describe(value)}`);
  }
  const types = typeList(s);
  if (types.length > 0 && !types.some((t) => hasType(value, t))) {
    errors.push(`${path}: expected ${types.join(' or ')} but got: ${describe(value)}`);
    return errors;
  }
  if (Array.isArray(value) && s['items'] !== undefined) {
    value.forEach((item, i) => errors.push(...validateAgainstSchema(spec, item, s['items'], `${path}[${i}]`, depth + 1)));
  }
  if (isObject(value)) {
    const props = isObject(s['properties']) ? s['properties'] : {};
    if (Array.isArray(s['required'])) {
      for (const name of s['required']) if (typeof name === 'string' && !(name in value)) errors.push(`${path}.${name}: required but missing`);
    }
    for (const [name, sub] of Object.entries(props)) {
      if (name in value) errors.push(...validateAgainstSchema(spec, value[name], sub, `${path}.${name}`, depth + 1));
    }
    if (s['additionalProperties'] === false) {
      for (const name of Object.keys(value)) if (!(name in props)) errors.push(`${path}.${name}: not allowed by the schema`);
    }
  }
  return errors;
}

function responseSchemaOf(spec: OpenApiSpec, op: Record<string, unknown>): Schema | undefined {
  const responses = op['responses'];
  if (!isObject(responses)) return undefined;
  const codes = Object.keys(responses).sort();
  const pick = codes.find((c) => /^2\d\d$/.test(c)) ?? codes.find((c) => /^2XX$/i.test(c)) ?? (codes.includes('default') ? 'default' : undefined);
  if (!pick) return undefined;
  // A response object may itself be a $ref (to #/components/responses/...).
  const res = deref(spec, responses[pick]);
  const content = res?.['content'];
  if (!isObject(content)) return undefined;
  const type = Object.keys(content).find((t) => t === 'application/json') ?? Object.keys(content).find((t) => /json/i.test(t));
  const media = type ? content[type] : undefined;
  return isObject(media) && isObject(media['schema']) ? media['schema'] : undefined;
}

function serverUrl(doc: Record<string, unknown>): string | undefined {
  const servers = doc['servers'];
  if (!Array.isArray(servers) || !isObject(servers[0]) || typeof servers[0]['url'] !== 'string') return undefined;
  const server = servers[0];
  const vars = isObject(server['variables']) ? server['variables'] : {};
  return (server['url'] as string).replace(/\{([^}]+)\}/g, (m, name: string) => {
    const v = vars[name];
    return isObject(v) && v['default'] !== undefined ? String(v['default']) : m;
  });
}

function checkRefs(node: unknown, file: string, at: string, depth = 0): void {
  if (depth > 200) throw new OpenApiError(`${file}: document nested too deeply at ${at}`);
  if (Array.isArray(node)) {
    node.forEach((n, i) => checkRefs(n, file, `${at}/${i}`, depth + 1));
    return;
  }
  if (!isObject(node)) return;
  for (const [k, v] of Object.entries(node)) {
    if (k === '$ref' && typeof v === 'string' && !v.startsWith('#')) {
      throw new OpenApiError(`${file}: external $ref "${v}" at ${at} is not supported; inline it or use an internal #/components/... reference`);
    }
    checkRefs(v, file, `${at}/${k}`, depth + 1);
  }
}

function typeList(s: Schema): string[] {
  const t = s['type'];
  if (typeof t === 'string') return [t];
  if (Array.isArray(t)) return t.filter((x): x is string => typeof x === 'string');
  return [];
}

function primaryType(s: Schema): string | undefined {
  const types = typeList(s).filter((t) => t !== 'null');
  if (types[0]) return types[0];
  if (isObject(s['properties'])) return 'object';
  if (s['items'] !== undefined) return 'array';
  return undefined;
}

function hasType(value: unknown, type: string): boolean {
  switch (type) {
    case 'string':
      return typeof value === 'string';
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value);
    case 'boolean':
      return typeof value === 'boolean';
    case 'array':
      return Array.isArray(value);
    case 'object':
      return isObject(value);
    case 'null':
      return value === null;
    default:
      return true;
  }
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return `array (${value.length})`;
  if (typeof value === 'string') return `string (${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)})`;
  if (typeof value === 'object') return 'object';
  return `${typeof value} (${String(value)})`;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The closest name by edit distance (≤ 2), for "did you mean". */
function nearest(name: string, candidates: string[]): string | undefined {
  let best: string | undefined;
  let bestD = 3;
  for (const c of candidates) {
    const d = editDistance(name, c);
    if (d < bestD) {
      bestD = d;
      best = c;
    }
  }
  return best;
}

function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const tmp = row[j]!;
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = tmp;
    }
  }
  return row[b.length]!;
}
