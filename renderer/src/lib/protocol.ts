/**
 * The renderer's single door to the engine: its types, re-exported from engine/protocol (erased
 * at build time), and the two pure engine modules it runs (the timeline's geometry, the verify
 * verdict). No other renderer module names an engine path, so the import-boundary test has one
 * file to check.
 */
export type * from '../../../engine/protocol/protocol.js';
export type { StoredEvent, EventType, EventPayloads, ErrorInfo } from '../../../engine/protocol/protocol.js';

// The one engine module the renderer runs: the timeline's geometry, pure (it imports nothing but a
// binary search), so the engine's window index and the renderer's lanes merge bars by one rule.
export * from '../../../engine/inspect/timeline-geometry.js';
// And when a verify is a ✓: one rule for the CLI, the crash lab and the studio's chip.
export { everyEntryRederived, fullyVerified, unfinished } from '../../../engine/executor/verify-report.js';
