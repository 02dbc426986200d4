/**
 * Effect identity in a fork. A fork's log begins with a copy of its parent's events up to a seq;
 * replaying them must ask for the effects they record, whose ids (and Idempotency-Keys, and keys
 * derived by generateId) hash the parent's run id. Past that point the fork acts on its own: its
 * effects hash its own id, so an API that honours Idempotency-Key does them again for the fork
 * instead of answering with the parent's results.
 *
 * So the run id an effect is named by depends on where the walk is: while the next recorded event
 * the walk has not consumed lies in a copied stretch, that stretch's recorder; once the walk is past
 * every copied event (live, or replaying the fork's own events), the fork's id. A fork of a fork
 * keeps its parent's stretches up to the fork point and adds one for the parent.
 *
 *   parent P, events 1..40, forked at 25 → F: identities [{toSeq: 25, runId: P}]
 *   F forked at 30                       → G: identities [{toSeq: 25, runId: P}, {toSeq: 30, runId: F}]
 *   F forked at 10                       → H: identities [{toSeq: 10, runId: P}]
 */
import type { ForkOrigin, StoredEvent } from '../log/events.js';

export type IdentitySegments = ForkOrigin['identities'];

/** The stretches of a run's log named by other runs: from its `run.started` (none for a run that is no fork). */
export function identitiesOf(first: StoredEvent | undefined): IdentitySegments {
  return first?.type === 'run.started' ? (first.payload.forkedFrom?.identities ?? []) : [];
}

/** A fork's stretches: its parent's up to the fork point, then the parent's own events. */
export function forkIdentities(parentRunId: string, parentFirst: StoredEvent | undefined, atSeq: number): IdentitySegments {
  const out: { toSeq: number; runId: string }[] = [];
  for (const segment of identitiesOf(parentFirst)) {
    // A cut inside a stretch the parent copied keeps that stretch's recorder up to the cut (before,
    // it was dropped, and the parent was taken for the recorder of events it had copied).
    if (segment.toSeq >= atSeq) return [...out, { toSeq: atSeq, runId: segment.runId }];
    out.push(segment);
  }
  return [...out, { toSeq: atSeq, runId: parentRunId }];
}

/** The run id naming an effect when the next unconsumed recorded event is `nextSeq` (null: none left). */
export function identityAt(identities: IdentitySegments, ownRunId: string, nextSeq: number | null): string {
  if (nextSeq === null) return ownRunId;
  for (const segment of identities) if (nextSeq <= segment.toSeq) return segment.runId;
  return ownRunId;
}
