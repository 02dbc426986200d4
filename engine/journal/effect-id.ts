/**
 * Effect identity: hash(run id, step path, effect kind, discriminator). It never includes a value
 * that could differ between the original run and a replay (no timestamps, no attempt numbers, no
 * response data), so a replayed or retried effect carries the same id — and, for HTTP, the same
 * Idempotency-Key header.
 */
import { createHash } from 'node:crypto';

export type EffectKind = 'http' | 'store' | 'pause' | 'wait';

export function effectId(runId: string, stepPath: string, kind: EffectKind, discriminator: string | number): string {
  const digest = createHash('sha256').update(`${runId}\u0000${stepPath}\u0000${kind}\u0000${discriminator}`).digest('hex');
  return `ef_${digest.slice(0, 32)}`;
}
