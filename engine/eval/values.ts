/**
 * Plain-value helpers shared by the evaluator, built-ins and schema matching: truthiness, type
 * names and short descriptions for error messages, safe field reads, and a canonical JSON form.
 *
 * Invariants: field reads only ever see *own* properties (so `constructor` or `__proto__` in a
 * mission never reaches JavaScript internals); `canonicalJson` is a pure function of the value's
 * JSON content (keys sorted), stable across runs and processes, because effect identities hash it.
 */

export type PlainObject = Record<string, unknown>;

/** JavaScript truthiness, which is Reqon's (§D.3): `0 "" null undefined false NaN` are falsy. */
export function isTruthy(value: unknown): boolean {
  return Boolean(value);
}

/** A non-null, non-array object (a JSON object, or a record built by an expression). */
export function isPlainObject(value: unknown): value is PlainObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Date);
}

export type TypeName = 'null' | 'undefined' | 'array' | 'object' | 'string' | 'number' | 'boolean' | 'date' | 'other';

export function typeName(value: unknown): TypeName {
  if (value === null) return 'null';
  if (value === undefined) return 'undefined';
  if (Array.isArray(value)) return 'array';
  if (value instanceof Date) return 'date';
  switch (typeof value) {
    case 'string':
      return 'string';
    case 'number':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'object':
      return 'object';
    default:
      return 'other';
  }
}

const PREVIEW_LIMIT = 40;

function truncate(text: string): string {
  return text.length > PREVIEW_LIMIT ? `${text.slice(0, PREVIEW_LIMIT - 1)}…` : text;
}

/**
 * "number (128)", "string ("abc")", "null", "array ([1,2])" — the value part of error messages. A
 * missing value is "absent (no value)": the language has no `undefined`, so no message names it.
 */
export function describeValue(value: unknown): string {
  const type = typeName(value);
  switch (type) {
    case 'null':
      return type;
    case 'undefined':
      return 'absent (no value)';
    case 'string':
      return `string (${truncate(JSON.stringify(value))})`;
    case 'number':
    case 'boolean':
      return `${type} (${String(value)})`;
    case 'date':
      return `date (${Number.isNaN((value as Date).getTime()) ? 'Invalid Date' : (value as Date).toISOString()})`;
    case 'array':
    case 'object': {
      let preview: string;
      try {
        preview = JSON.stringify(value) ?? '';
      } catch {
        preview = type === 'array' ? '[…]' : '{…}';
      }
      return `${type} (${truncate(preview)})`;
    }
    case 'other':
      return typeof value;
  }
}

/** "an array", "a string" — for "expected an array but got: …". */
export function withArticle(type: string): string {
  return /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`;
}

/**
 * The string form used by `+`, `concat`, `join` and `toString`: null/undefined → "", arrays and
 * objects → JSON (the original's `String(obj)` gave "[object Object]", which is never what anyone
 * wanted in a label or a path).
 */
export function displayString(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? 'Invalid Date' : value.toISOString();
  if (typeof value === 'object') {
    try {
      return JSON.stringify(value) ?? '';
    } catch {
      return Array.isArray(value) ? '[…]' : '{…}';
    }
  }
  return String(value);
}

const INDEX_PATTERN = /^(0|[1-9][0-9]*)$/;

/**
 * The envelope field a paginated fetch took its pages' items from (`data` of `{data: [...]}`),
 * kept on the flat array of all items that `response` then is: `response.data` names that array
 * too, so a mission written against one page's shape reads every page (docs/language.md). A
 * symbol, so no copy, JSON or log ever carries it.
 */
const ITEMS_FIELD = Symbol('reqon.paginatedItemsField');

/** Marks `items` as the flat result of pages whose items sat under `field`; returns `items`. */
export function withItemsField(items: unknown[], field: string): unknown[] {
  Object.defineProperty(items, ITEMS_FIELD, { value: field, enumerable: false });
  return items;
}

function itemsField(array: unknown[]): string | undefined {
  return (array as { [ITEMS_FIELD]?: string })[ITEMS_FIELD];
}

/**
 * A paginated fetch's flat result seen as the envelope of one page holding all items
 * (`{data: [...]}`), for a schema arm written against the page's shape; undefined for any other value.
 */
export function paginatedEnvelope(value: unknown): PlainObject | undefined {
  if (!Array.isArray(value)) return undefined;
  const field = itemsField(value);
  if (field === undefined) return undefined;
  const envelope: PlainObject = {};
  setOwn(envelope, field, value);
  return envelope;
}

/**
 * One step of a dotted-name walk or a `.name` after a call: own fields of objects; elements of
 * arrays by a decimal index, plus `length` (the original read any property of an array, and
 * `items.length` is the one that missions rely on); any other name on an array is that field of
 * its items (`itemsField`). Everything else is `undefined`.
 */
export function fieldOf(value: unknown, key: string): unknown {
  if (Array.isArray(value)) {
    if (key === 'length') return value.length;
    if (key === itemsField(value)) return value;
    return INDEX_PATTERN.test(key) ? value[Number(key)] : itemsFieldValues(value, key);
  }
  if (typeof value === 'object' && value !== null && !(value instanceof Date)) {
    return Object.prototype.hasOwnProperty.call(value, key) ? (value as PlainObject)[key] : undefined;
  }
  return undefined;
}

/**
 * `orders.total`: the `total` of each item of `orders`, in order (docs/language.md, "a field of an
 * array"). Items without the field (or not objects) are skipped; a null one is kept. An item's
 * value that is itself an array contributes its elements, so `orders.lines.qty` is every line's
 * qty. A field that no item has is absent, as it always was (a misspelt `orders.totl` fails in
 * `sum` instead of summing nothing, and a paginated result's `response.next` stays absent); an
 * empty array gives `[]`, so `sum(none.total)` is 0. Absent (never `[]`) on an empty paginated
 * result, whose other envelope fields are absent however many items it has.
 */
function itemsFieldValues(items: unknown[], key: string): unknown[] | undefined {
  if (items.length === 0) return itemsField(items) === undefined ? [] : undefined;
  const out: unknown[] = [];
  let found = false;
  for (const item of items) {
    if (!isPlainObject(item) || !Object.prototype.hasOwnProperty.call(item, key)) continue;
    found = true;
    const field = item[key];
    if (Array.isArray(field)) for (const element of field) out.push(element); // no spread: a huge array would overflow the call stack
    else if (field !== undefined) out.push(field);
  }
  return found ? out : undefined;
}

/** Whether `fieldOf(value, key)` names an existing field (even one holding null or undefined). */
export function hasField(value: unknown, key: string): boolean {
  if (Array.isArray(value)) return key === 'length' || key === itemsField(value) || (INDEX_PATTERN.test(key) && Number(key) < value.length);
  if (typeof value === 'object' && value !== null && !(value instanceof Date)) {
    return Object.prototype.hasOwnProperty.call(value, key);
  }
  return false;
}

/**
 * Whether `obj` has the own field `key` names: a scalar key names the field `String(key)`; an
 * object, array or date names none (it may not even have a string form: a null-prototype object).
 * Used by `obj[k]`, `k in obj` and `includes(obj, k)`, so all three agree.
 */
export function hasOwnField(obj: PlainObject, key: unknown): boolean {
  return (typeof key !== 'object' || key === null) && Object.prototype.hasOwnProperty.call(obj, String(key));
}

/**
 * Sets an own data property, even for `__proto__`, which plain assignment would turn into a
 * prototype change. Every other key is a plain assignment: the same result on the plain objects
 * the evaluator builds, and several times cheaper than defineProperty on this hot path.
 */
export function setOwn(target: PlainObject, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else target[key] = value;
}

/**
 * JSON with object keys sorted (by UTF-16 code units, locale-independent), for hashing.
 * Follows JSON.stringify for the rest: `undefined` fields are dropped, `undefined` array elements
 * and non-finite numbers become null, Dates become their ISO string. A top-level `undefined` is
 * "null". Cyclic values and bigints are programming errors and throw a TypeError.
 */
export function canonicalJson(value: unknown): string {
  return canonical(value, new Set()) ?? 'null';
}

function canonical(value: unknown, seen: Set<object>): string | undefined {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'undefined':
    case 'function':
    case 'symbol':
      return undefined;
    case 'boolean':
      return value ? 'true' : 'false';
    case 'number':
      return Number.isFinite(value) ? JSON.stringify(value) : 'null';
    case 'string':
      return JSON.stringify(value);
    case 'bigint':
      throw new TypeError('canonicalJson: a bigint has no JSON form');
    case 'object':
      break;
  }
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? 'null' : JSON.stringify(value.toISOString());
  const obj = value as object;
  if (seen.has(obj)) throw new TypeError('canonicalJson: the value is cyclic');
  seen.add(obj);
  let out: string;
  if (Array.isArray(obj)) {
    out = `[${obj.map((item) => canonical(item, seen) ?? 'null').join(',')}]`;
  } else {
    const parts: string[] = [];
    for (const key of Object.keys(obj).sort()) {
      const encoded = canonical((obj as PlainObject)[key], seen);
      if (encoded !== undefined) parts.push(`${JSON.stringify(key)}:${encoded}`);
    }
    out = `{${parts.join(',')}}`;
  }
  seen.delete(obj);
  return out;
}
