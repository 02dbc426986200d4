/**
 * Effect identity: hash(run id, step path, effect kind, discriminator). It never includes a value
 * that could differ between the original run and a replay (no timestamps, no attempt numbers, no
 * response data), so a replayed or retried effect carries the same id — and, for HTTP, the same
 * Idempotency-Key header.
 */
import { hash } from 'node:crypto';

export type EffectKind = 'http' | 'store' | 'pause' | 'wait';

export function effectId(runId: string, stepPath: string, kind: EffectKind, discriminator: string | number): string {
  // One-shot `hash` (no Hash object per call): the same sha256 of the same UTF-8 bytes as
  // createHash().update().digest() — replay computes one of these per stored record.
  const digest = hash('sha256', `${runId}\u0000${stepPath}\u0000${kind}\u0000${discriminator}`, 'hex');
  return `ef_${digest.slice(0, 32)}`;
}
