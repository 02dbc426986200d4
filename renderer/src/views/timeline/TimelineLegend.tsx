/**
 * The marker legend: one glyph and colour per MarkerKind, shared with the lanes through
 * MARKER_GLYPHS so the two cannot disagree.
 */
import type { MarkerKind } from '../../lib/protocol.js';

export const MARKER_GLYPHS: Record<MarkerKind, string> = {
  effect: '●',
  retry: '↻',
  crash: '✕',
  resume: '▶',
  timer: '◔',
  pause: '‖',
  webhook: '⚡',
  error: '!',
  checkpoint: '⚑',
};

const KINDS = Object.keys(MARKER_GLYPHS) as MarkerKind[];

export function TimelineLegend() {
  return (
    <ul className="timeline-legend" aria-label="Legend">
      <li>
        <span className="legend-bar bar-completed" /> step
      </li>
      <li>
        <span className="legend-bar bar-running" /> running
      </li>
      <li>
        <span className="legend-bar bar-failed" /> failed
      </li>
      {KINDS.map((kind) => (
        <li key={kind}>
          <span className={`marker-glyph marker-${kind}`}>{MARKER_GLYPHS[kind]}</span> {kind}
        </li>
      ))}
    </ul>
  );
}
