/**
 * Values as the log holds them. An event's payload is stored as JSON, so a replay reads back
 * exactly what JSON can say: no `undefined` fields, no `-0`, no Dates (their ISO string), and no
 * Infinity or NaN (JSON has none; `JSON.stringify` would write `null`). A live run that acted on
 * such a value would act differently when replayed — one branch live, the other on resume — so a
 * value that enters a run from outside (a response, a payload, a webhook body, a recorded input)
 * is turned into its logged form *before* the run acts on it, and a number JSON cannot hold is
 * refused with a clear error rather than silently recorded as `null`.
 */

export class UnloggableValueError extends Error {
  readonly code = 'unrecordable-value';
  constructor(readonly where: string, readonly at: string, readonly value: number) {
    super(
      `${where} holds ${String(value)} at ${at}: a number beyond what a 64-bit float can hold (or not a number), ` +
        'which the log cannot record. The run refuses it rather than act on a value it could not replay',
    );
    this.name = 'UnloggableValueError';
  }
}

/**
 * `value` as a replay will read it back from the log: the same reference when it already is
 * (the common case: one walk, no copy), else a canonical copy (the input is never mutated).
 * Throws UnloggableValueError for Infinity/NaN anywhere inside, naming where (`$.items[3].total`).
 */
export function asLogged<T>(value: T, where: string): T {
  const out = logged(value, '$', where, new Set());
  return (out === OMIT ? null : out) as T;
}

const OMIT = Symbol('omit');

function logged(value: unknown, at: string, where: string, seen: Set<object>): unknown {
  switch (typeof value) {
    case 'number':
      if (!Number.isFinite(value)) throw new UnloggableValueError(where, at, value);
      return Object.is(value, -0) ? 0 : value;
    case 'string':
    case 'boolean':
      return value;
    case 'undefined':
    case 'function':
    case 'symbol':
      return OMIT;
    case 'bigint':
      return String(value);
    case 'object':
      break;
  }
  if (value === null) return null;
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : value.toISOString();
  const obj = value as object;
  if (seen.has(obj)) throw new TypeError(`${where}: the value is cyclic at ${at}`);
  seen.add(obj);
  let copy: unknown[] | Record<string, unknown> | undefined;
  if (Array.isArray(obj)) {
    for (let i = 0; i < obj.length; i++) {
      const item: unknown = obj[i];
      const out = logged(item, `${at}[${i}]`, where, seen);
      const fixed = out === OMIT ? null : out;
      if (copy === undefined && !Object.is(fixed, item)) copy = obj.slice(0, i);
      if (copy !== undefined) (copy as unknown[]).push(fixed);
    }
  } else {
    const keys = Object.keys(obj);
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i]!;
      const item = (obj as Record<string, unknown>)[key];
      const out = logged(item, `${at}.${key}`, where, seen);
      if (copy === undefined && !Object.is(out, item)) {
        copy = {};
        for (let k = 0; k < i; k++) defineField(copy, keys[k]!, (obj as Record<string, unknown>)[keys[k]!]);
      }
      if (copy !== undefined && out !== OMIT) defineField(copy as Record<string, unknown>, key, out);
    }
  }
  seen.delete(obj);
  return copy ?? obj;
}

/** An own data field, even when the key is `__proto__`. */
function defineField(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/**
 * A cheap test of JSON text: false only when its parse cannot hold a value `asLogged` changes or
 * refuses (a `-0`, or a number beyond a 64-bit float). Lets the door skip the walk. A number
 * overflows only past 1.8e308: with an exponent of three digits, or a digit run whose length and
 * a two-digit exponent reach 309 — so a run of 200 digits is walked (`1` and 250 zeros `e99`
 * slipped through when only runs of 300 were).
 */
export function jsonTextMayNeedLogging(text: string): boolean {
  return /-0(?![.\d]*[1-9])|[eE][+-]?\d{3}|\d{200}/.test(text);
}
