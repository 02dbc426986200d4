/**
 * Keys and record shape for store writes, shared by every store kind.
 *
 * Invariant: a key is a pure function of the mission and the record. It never depends on time,
 * randomness or the run, so a replay writes every record under the key the original run used,
 * re-applying a write overwrites instead of duplicating, and a second run of the same sync into a
 * store that outlives runs (sql, nosql, file, postgrest) overwrites the first run's records
 * instead of adding copies. (The original implementation fell back to a random number, which made
 * every replay add a copy; a later one hashed the effect id, which hashes the random run id.)
 *
 * Keys are text in every store kind (a sql `_key TEXT`, a file's JSON object keys, a PostgREST
 * `eq.` filter), so `id: 1` and `id: "1"` are the SAME key, "1": one record, the later write
 * winning (or merged into, with upsert). This is deliberate: APIs often send one id as a number
 * in one place and a string in another.
 */
import { hash } from 'node:crypto';
import { canonicalJson } from './stable-json.js';
import { StoreError } from './store-error.js';

/** The evaluated `key:` option of a store step, with where it came from for error messages. */
export interface StoreKeyValue {
  value: unknown;
  /** The step's path or a readable name (`sync.2 store → orders`), quoted in errors. */
  step: string;
}

/**
 * The key a record is stored under.
 * - `keyValue` given (the step has `key:`): its value, stringified; null/undefined is an error.
 * - else `record.id` when it is a string or a number (stringified: `1` and `"1"` are one key).
 * - else the record's content key (`contentKey`): the same record gets the same key in every run,
 *   and two records with the same content are one record.
 * A number key must be a safe integer or a fraction: an integer beyond 2^53 is refused (it has
 * lost digits, so it could be another record's key too).
 * `index` is the record's 0-based position in the step's source array and `effectId` the write's
 * effect id: both only name the record in error messages.
 */
export function storeKey(
  record: Record<string, unknown>,
  index: number,
  effectId: string,
  keyValue?: StoreKeyValue,
): string {
  if (!Number.isInteger(index) || index < 0) {
    throw new RangeError(`storeKey: index must be a non-negative integer, got ${index}`);
  }
  if (keyValue !== undefined) {
    return keyToString(keyValue.value, `record #${index} of step ${keyValue.step}`, 'key');
  }
  const id = record['id'];
  if (id !== undefined && id !== null) {
    return keyToString(id, `record #${index} (effect ${effectId})`, 'id');
  }
  return contentKey(record);
}

/**
 * The fallback key for records with neither `key:` nor `id`: the first 16 hex digits of the
 * sha256 of the record's canonical JSON (object keys sorted at every level, `undefined` fields
 * left out, as JSON does). Exported for tests and the inspector.
 */
export function contentKey(record: Record<string, unknown>): string {
  return hash('sha256', canonicalJson(record), 'hex').slice(0, 16);
}

function keyToString(value: unknown, where: string, what: 'key' | 'id'): string {
  const label = what === 'key' ? 'store key' : 'record id';
  switch (typeof value) {
    case 'string':
      if (value === '') {
        throw new StoreError('store.bad-key', `${label} evaluated to an empty string for ${where}; every record needs a non-empty key`);
      }
      return value;
    case 'number':
      if (!Number.isFinite(value)) {
        throw new StoreError('store.bad-key', `${label} evaluated to ${value} for ${where}; use a finite number or a string`);
      }
      // JSON numbers past 2^53 come out of parsing with their last digits changed: neighbouring
      // ids (database sequences, snowflakes) become one number, and their records one record.
      if (Number.isInteger(value) && !Number.isSafeInteger(value)) {
        throw new StoreError(
          'store.bad-key',
          `${label} ${value} for ${where} is an integer beyond 2^53 (${Number.MAX_SAFE_INTEGER}): a JSON number that large has lost its last digits, so different records could share this key; key by the id as a string (e.g. \`key: .id_str\`, if the API sends one)`,
        );
      }
      return String(value);
    case 'bigint':
    case 'boolean':
      return String(value);
    case 'undefined':
      throw new StoreError('store.bad-key', `${label} evaluated to null for ${where}; check the \`key:\` expression or filter such records out`);
    case 'object':
      if (value === null) {
        throw new StoreError('store.bad-key', `${label} evaluated to null for ${where}; check the \`key:\` expression or filter such records out`);
      }
      throw new StoreError('store.bad-key', `${label} must be a string, a number or a boolean (its text is the key) but got: ${describeValue(value)} for ${where}`);
    case 'function':
    case 'symbol':
      throw new StoreError('store.bad-key', `${label} must be a string, a number or a boolean (its text is the key) but got: ${describeValue(value)} for ${where}`);
  }
}

/**
 * A store accepts only plain objects; the caller expands arrays into one write per element first.
 * Throws `expected an object but got: number (128)` (with `where` prefixed when given).
 */
export function assertRecord(value: unknown, where?: string): asserts value is Record<string, unknown> {
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) return;
  const prefix = where === undefined ? '' : `${where}: `;
  throw new StoreError('store.bad-record', `${prefix}expected an object but got: ${describeValue(value)}`);
}

/** `number (128)`, `string ("abc")`, `array (3 items)`, `null` — the shape used in value errors. */
export function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return `array (${value.length} item${value.length === 1 ? '' : 's'})`;
  switch (typeof value) {
    case 'undefined':
      return 'absent (no value)';
    case 'string':
      return `string (${excerpt(JSON.stringify(value))})`;
    case 'number':
    case 'bigint':
    case 'boolean':
      return `${typeof value} (${String(value)})`;
    case 'symbol':
      return `symbol (${String(value.description ?? '')})`;
    case 'function':
      return 'function';
    default:
      return `object (${excerpt(safeJson(value as object))})`;
  }
}

function safeJson(value: object): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

function excerpt(text: string, max = 60): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
