/**
 * Timeline controls: axis (seq or wall time), zoom in/out, fit, and what the window shows.
 */
import type { TimelineWindow } from '../../lib/protocol.js';
import type { TimelineAxis } from '../../lib/timeline-index.js';
import { formatDuration } from '../../lib/time-format.js';

interface Props {
  axis: TimelineAxis;
  onAxis: (axis: TimelineAxis) => void;
  onZoomIn: () => void;
  onZoomOut: () => void;
  onFit: () => void;
  window: [number, number];
  model: TimelineWindow;
  lanes: number;
}

export function TimelineToolbar({ axis, onAxis, onZoomIn, onZoomOut, onFit, window: win, model, lanes }: Props) {
  const span = win[1] - win[0];
  return (
    <div className="toolbar timeline-toolbar" role="toolbar" aria-label="Timeline controls">
      <div className="segmented" role="radiogroup" aria-label="Axis">
        <button role="radio" aria-checked={axis === 'seq'} className={axis === 'seq' ? 'active' : ''} onClick={() => onAxis('seq')}>
          by event
        </button>
        <button role="radio" aria-checked={axis === 'time'} className={axis === 'time' ? 'active' : ''} onClick={() => onAxis('time')}>
          by time
        </button>
      </div>
      <button aria-label="Zoom in" onClick={onZoomIn}>+</button>
      <button aria-label="Zoom out" onClick={onZoomOut}>−</button>
      <button aria-label="Fit" onClick={onFit}>Fit</button>
      <span className="muted" data-testid="timeline-window">
        {axis === 'seq' ? `events ${Math.max(1, Math.floor(win[0]))}–${Math.floor(win[1])}` : `${formatDuration(win[0])} – ${formatDuration(win[1])}`}
        {' · '}
        {axis === 'seq' ? `${Math.round(span)} events wide` : `${formatDuration(span)} wide`}
      </span>
      <span className="toolbar-spacer" />
      <span className="muted">
        {lanes} lanes · {model.barCount} steps · {model.markerCount} markers · {model.lastSeq} events
      </span>
    </div>
  );
}
