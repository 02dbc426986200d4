/**
 * The axis ruler above the lanes: nice-stepped ticks for the visible window only.
 */
import type { TimelineAxis } from '../../lib/timeline-index.js';
import { niceStep, ticks } from '../../lib/ticks.js';
import { formatDuration } from '../../lib/time-format.js';

interface Props {
  axis: TimelineAxis;
  window: [number, number];
  width: number;
  labelWidth: number;
}

export function TimelineRuler({ axis, window: win, width, labelWidth }: Props) {
  const span = win[1] - win[0];
  const step = Math.max(axis === 'seq' ? 1 : 1e-3, niceStep(span, width));
  const px = width / Math.max(span, 1e-9);
  return (
    <div className="timeline-ruler" aria-hidden="true">
      <div className="timeline-ruler-label" style={{ width: labelWidth }}>
        {axis === 'seq' ? 'seq' : 'elapsed'}
      </div>
      <div className="timeline-ruler-ticks">
        {ticks(win[0], win[1], step).map((t) => (
          <span key={t} className="tick" style={{ left: (t - win[0]) * px }}>
            {axis === 'seq' ? `#${t}` : formatDuration(t)}
          </span>
        ))}
      </div>
    </div>
  );
}
