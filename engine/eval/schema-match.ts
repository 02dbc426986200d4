/**
 * Structural schema matching (§B.5), used by `match` arms, transform variants and `[Schema]` arms.
 *
 * Rule: the value is a non-null, non-array object; every non-optional field is present (not
 * `undefined`); every present field has a compatible type; extra fields are allowed. Type names:
 * string; int/integer; decimal/number/float/double; boolean/bool; date/datetime; any; array;
 * object; another declared schema (nested match); `[T]` (every element matches T); `{…}` (nested
 * fields). Unknown type names are permissive. An *optional* field may also hold null (APIs send
 * null for "absent"); a required field holding null matches only `any` or an unknown type.
 */
import type { SchemaDecl, SchemaField, TypeRef } from '../lang/ast.js';
import { isDateValue } from './operators.js';
import { isPlainObject, paginatedEnvelope } from './values.js';

const MAX_NESTING = 256;

export type SchemaTable = ReadonlyMap<string, SchemaDecl>;

export function matchesSchema(value: unknown, schema: SchemaDecl, schemas: SchemaTable): boolean {
  return matchesFields(paginatedEnvelope(value) ?? value, schema.fields, schemas, 0);
}

/** For `[Schema]` arms: an array every element of which matches (an empty array matches). */
export function matchesSchemaArray(value: unknown, schema: SchemaDecl, schemas: SchemaTable): boolean {
  return Array.isArray(value) && value.every((item) => matchesSchema(item, schema, schemas));
}

function matchesFields(value: unknown, fields: SchemaField[], schemas: SchemaTable, depth: number): boolean {
  if (!isPlainObject(value)) return false;
  for (const field of fields) {
    const key = field.name.name;
    const present = Object.prototype.hasOwnProperty.call(value, key) ? value[key] : undefined;
    if (present === undefined) {
      if (field.optional) continue;
      return false;
    }
    if (present === null && field.optional) continue;
    if (!matchesType(present, field.type, schemas, depth)) return false;
  }
  return true;
}

function matchesType(value: unknown, type: TypeRef, schemas: SchemaTable, depth: number): boolean {
  switch (type.kind) {
    case 'ArrayType':
      return Array.isArray(value) && value.every((item) => matchesType(item, type.element, schemas, depth));
    case 'ObjectType':
      return matchesFields(value, type.fields, schemas, depth);
    case 'NamedType':
      return matchesNamedType(value, type.name, schemas, depth);
  }
}

function matchesNamedType(value: unknown, name: string, schemas: SchemaTable, depth: number): boolean {
  switch (name.toLowerCase()) {
    case 'string':
      return typeof value === 'string';
    case 'int':
    case 'integer':
      return Number.isInteger(value);
    case 'decimal':
    case 'number':
    case 'float':
    case 'double':
      return typeof value === 'number' && !Number.isNaN(value);
    case 'boolean':
    case 'bool':
      return typeof value === 'boolean';
    case 'date':
    case 'datetime':
      return isDateValue(value);
    case 'any':
      return true;
    case 'array':
      return Array.isArray(value);
    case 'object':
      return isPlainObject(value);
    default:
      break;
  }
  const nested = schemas.get(name);
  if (nested === undefined) return true; // unknown type names are permissive (§B.5)
  // JSON values are trees, so a recursive schema recurses only as deep as the value; the cap
  // stops a cyclic in-memory value from recursing forever.
  if (depth >= MAX_NESTING) return false;
  return matchesFields(value, nested.fields, schemas, depth + 1);
}
