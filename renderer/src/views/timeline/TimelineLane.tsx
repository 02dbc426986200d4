/**
 * One lane of the timeline: its label and the bars and markers inside the visible window,
 * placed by lib/timeline-index (which merges what would share pixels). Clicking selects a seq.
 */
import { memo } from 'react';
import { placeBars, placeMarkers, type LaneIndex, type TimelineAxis } from '../../lib/timeline-index.js';
import { barDuration } from '../../lib/time-format.js';
import { MARKER_GLYPHS } from './TimelineLegend.js';

interface Props {
  lane: LaneIndex;
  axis: TimelineAxis;
  t0: number;
  from: number;
  to: number;
  pxPerUnit: number;
  width: number;
  labelWidth: number;
  selectedSeq: number | null;
  onSelect: (seq: number) => void;
}

const DEPTH_OFFSET = 17;
const MAX_SHOWN_DEPTH = 3;

export const TimelineLane = memo(function TimelineLane({ lane, axis, t0, from, to, pxPerUnit, width, labelWidth, selectedSeq, onSelect }: Props) {
  const bars = pxPerUnit > 0 ? placeBars(lane, axis, t0, from, to, pxPerUnit) : [];
  const markers = pxPerUnit > 0 ? placeMarkers(lane.markers, axis, t0, from, to, pxPerUnit) : [];
  return (
    <div className="timeline-lane" data-lane={lane.id}>
      <div className="timeline-lane-label" style={{ width: labelWidth }} title={lane.label}>
        {lane.stage >= 0 && <span className="stage-chip">S{lane.stage}</span>}
        <span className="lane-name">{lane.label}</span>
      </div>
      <div className="timeline-lane-track" style={{ width }}>
        {bars.map(({ bar, left, width: w, depth, merged }) => {
          const selected = selectedSeq !== null && selectedSeq >= bar.startSeq && selectedSeq <= bar.endSeq && merged === 1;
          const title =
            merged > 1
              ? `${merged} steps (zoom in to separate)`
              : `${bar.stepType} ${bar.stepPath} (line ${bar.line}) · #${bar.startSeq}–#${bar.endSeq} · ${barDuration(bar)} · ${bar.status}`;
          return (
            <button
              key={`${bar.startSeq}:${depth}`}
              className={`timeline-bar bar-${bar.status}${selected ? ' selected' : ''}${merged > 1 ? ' merged' : ''}`}
              style={{ left, width: w, top: 6 + Math.min(depth, MAX_SHOWN_DEPTH) * DEPTH_OFFSET }}
              title={title}
              aria-label={`Step ${bar.stepPath}`}
              data-seq={bar.startSeq}
              onClick={() => onSelect(bar.startSeq)}
            >
              {merged === 1 && <BarText stepType={bar.stepType} duration={barDuration(bar)} width={w} />}
            </button>
          );
        })}
        {markers.map(({ marker, left, merged }) => (
          <button
            key={`${marker.kind}:${marker.seq}`}
            className={`timeline-marker marker-${marker.kind}${selectedSeq === marker.seq ? ' selected' : ''}`}
            style={{ left: left - 6, top: lane.maxDepth < 0 ? 9 : 8 + (Math.min(lane.maxDepth, MAX_SHOWN_DEPTH) + 1) * DEPTH_OFFSET }}
            title={`${marker.kind}: ${marker.label} · #${marker.seq}${merged > 1 ? ` (+${merged - 1} more)` : ''}`}
            aria-label={`${marker.kind} marker at ${marker.seq}`}
            data-seq={marker.seq}
            onClick={() => onSelect(marker.seq)}
          >
            {MARKER_GLYPHS[marker.kind]}
          </button>
        ))}
      </div>
    </div>
  );
});

/** Width of one character of the bars' 10 px font, generously: a number must never be cut. */
const BAR_CHAR_PX = 6.5;
const BAR_PADDING_PX = 12;

/**
 * A bar's label: the step type, which gives way (ellipsis), and its duration, which is shown whole
 * or not at all — a bar too narrow for the number shows none (its title still says it).
 */
function BarText({ stepType, duration, width }: { stepType: string; duration: string; width: number }) {
  const durationPx = duration.length * BAR_CHAR_PX + BAR_PADDING_PX;
  if (width < durationPx) return null;
  return (
    <span className="bar-text">
      {width >= durationPx + 3 * BAR_CHAR_PX && <span className="bar-type">{stepType}</span>}
      <span className="bar-duration num">{duration}</span>
    </span>
  );
}
