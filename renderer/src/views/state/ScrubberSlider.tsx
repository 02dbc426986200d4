/**
 * The scrubber's slider row: range over [1, lastSeq], step buttons, position readout, and the
 * "Compare with…" pin. Keyboard stepping is handled by the parent so it works from anywhere
 * inside the State view.
 */
interface Props {
  position: number;
  lastSeq: number;
  pinnedSeq: number | null;
  following: boolean;
  onChange: (seq: number | null) => void;
  onPin: () => void;
}

export function ScrubberSlider({ position, lastSeq, pinnedSeq, following, onChange, onPin }: Props) {
  return (
    <div className="toolbar scrubber-slider" role="toolbar" aria-label="Scrubber controls">
      <button aria-label="First event" onClick={() => onChange(1)}>|◀</button>
      <button aria-label="Previous event" onClick={() => onChange(Math.max(1, position - 1))}>◀</button>
      <div className="slider-wrap">
        <input
          type="range"
          aria-label="Position"
          min={1}
          max={Math.max(1, lastSeq)}
          step={1}
          value={position}
          onChange={(e) => onChange(Number(e.target.value))}
        />
        {pinnedSeq !== null && lastSeq > 1 && (
          <span className="pin-mark" style={{ left: `${((pinnedSeq - 1) / (lastSeq - 1)) * 100}%` }} title={`pinned at #${pinnedSeq}`} aria-hidden="true" />
        )}
      </div>
      <button aria-label="Next event" onClick={() => onChange(Math.min(lastSeq, position + 1))}>▶</button>
      <button aria-label="Last event" onClick={() => onChange(null)} className={following ? 'active' : ''} title="Follow the end of the run">
        ▶|
      </button>
      <span className="position-readout" data-testid="scrub-position">
        #{position} / {lastSeq}
      </span>
      <button aria-label={pinnedSeq === null ? 'Compare with…' : 'Stop comparing'} className={pinnedSeq !== null ? 'active' : ''} onClick={onPin}>
        {pinnedSeq === null ? 'Compare with…' : `Comparing #${pinnedSeq} → #${position} ✕`}
      </button>
      <span className="muted kbd-hint">
        <kbd>←</kbd>/<kbd>→</kbd> step · <kbd>Shift</kbd> ×10 · <kbd>Home</kbd>/<kbd>End</kbd>
      </span>
    </div>
  );
}
