/**
 * The renderer's single door to engine types: everything it knows about the engine is re-exported
 * here from engine/protocol (types only, erased at build time). No other renderer module names an
 * engine path, so the import-boundary test has one line to check.
 */
export type * from '../../../engine/protocol/protocol.js';
export type { StoredEvent, EventType, EventPayloads, ErrorInfo } from '../../../engine/protocol/protocol.js';
