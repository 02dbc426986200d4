/**
 * One side (original or replayed) of a replay-diff row: seq, event type, step path and effect ID,
 * with the fields that differ from the other side marked. Where the replay stopped at the
 * divergence and has no entry, it shows what the replay asked for instead.
 */
import type { VerifyEntry } from '../../lib/protocol.js';

interface Props {
  entry: VerifyEntry | null;
  other: VerifyEntry | null;
  asked: string | null;
}

export function ReplayDiffTableSide({ entry, other, asked }: Props) {
  if (!entry && asked) {
    return (
      <div className="verify-side asked">
        <span className="seq">asked</span>
        <span className="differs">{asked}</span>
      </div>
    );
  }
  if (!entry) return <div className="verify-side empty">—</div>;
  const pathDiffers = other !== null && other.stepPath !== entry.stepPath;
  const effectDiffers = other !== null && other.effectId !== entry.effectId;
  const typeDiffers = other !== null && other.type !== entry.type;
  return (
    <div className="verify-side">
      <span className="seq">#{entry.seq}</span>
      <span className={`verify-type${typeDiffers ? ' differs' : ''}`}>{entry.type}</span>
      <code className={pathDiffers ? 'differs' : ''}>{entry.stepPath}</code>
      <code className={`effect-id${effectDiffers ? ' differs' : ''}`}>{entry.effectId ?? ''}</code>
    </div>
  );
}
