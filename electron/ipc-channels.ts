/**
 * The names of the two IPC channels between the main process and the preload bridge, and the
 * envelope an invoke answers with. Electron flattens a thrown error to its message, so the main
 * process returns `{ok: false, error}` instead and the preload rethrows the ProtocolError as is.
 * (preload.cts repeats the two names: a sandboxed preload may require nothing but 'electron'.)
 */
import type { ProtocolError } from '../engine/protocol/protocol.js';

export const INVOKE_CHANNEL = 'reqon:invoke';
export const PUSH_CHANNEL = 'reqon:push';

export type InvokeReply = { ok: true; value: unknown } | { ok: false; error: ProtocolError };
