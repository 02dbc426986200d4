/**
 * Checks on request bodies: they arrive as JSON from a browser or IPC, so the types in
 * protocol.ts are a promise the sender may not keep. Each helper throws a 'bad-request'
 * StudioError that names the channel and the field.
 */
import type { ValueWindow } from '../protocol/protocol.js';
import { StudioError } from './studio-error.js';

export type Fields = Record<string, unknown>;

export function asFields(channel: string, req: unknown): Fields {
  if (req === undefined || req === null) return {};
  if (typeof req !== 'object' || Array.isArray(req)) {
    throw new StudioError('bad-request', `${channel}: the request must be a JSON object`);
  }
  return req as Fields;
}

export function str(channel: string, req: Fields, field: string): string {
  const value = req[field];
  if (typeof value !== 'string' || value === '') {
    throw new StudioError('bad-request', `${channel}: "${field}" must be a non-empty string`);
  }
  return value;
}

export function optStr(channel: string, req: Fields, field: string): string | undefined {
  return req[field] === undefined || req[field] === null ? undefined : str(channel, req, field);
}

export function int(channel: string, req: Fields, field: string, min = 0): number {
  const value = req[field];
  // Safe integers only: 1e308 is an integer to JavaScript, but no count, seq or limit, and SQLite
  // refuses it ("datatype mismatch") — a 400 naming the field, not a 500.
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min) {
    throw new StudioError('bad-request', `${channel}: "${field}" must be an integer >= ${min} and <= ${Number.MAX_SAFE_INTEGER}`);
  }
  return value;
}

export function optInt(channel: string, req: Fields, field: string, min = 0): number | undefined {
  return req[field] === undefined || req[field] === null ? undefined : int(channel, req, field, min);
}

export function optStringMap(channel: string, req: Fields, field: string): Record<string, string> {
  const value = req[field];
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw new StudioError('bad-request', `${channel}: "${field}" must be an object of strings`);
  }
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(value)) {
    if (typeof v !== 'string') throw new StudioError('bad-request', `${channel}: "${field}.${k}" must be a string`);
    out[k] = v;
  }
  return out;
}

/** `windows` of run.stateAt: at most 64 `{where, path, from}`, each field checked. */
export function valueWindows(channel: string, req: Fields): ValueWindow[] {
  const raw = req.windows;
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw) || raw.length > 64) throw new StudioError('bad-request', `${channel}: "windows" must be an array of at most 64 {where, path, from}`);
  return raw.map((w: unknown, i) => {
    const fields = asFields(`${channel} windows[${i}]`, w);
    return { where: str(`${channel} windows[${i}]`, fields, 'where'), path: str(`${channel} windows[${i}]`, fields, 'path'), from: int(`${channel} windows[${i}]`, fields, 'from') };
  });
}
