/**
 * Streamed syncs: `get … { paginate }` directly followed by `store response -> S` stores each page
 * as it arrives instead of gathering every page into `response` first, so a million-record sync
 * holds one page in memory, not a million records.
 *
 * The writes are exactly those of the unstreamed pair — same effect ids (`store` index = the
 * item's position in the whole response), same keys, same records, same events at the same step
 * paths — only committed page by page. The sync's checkpoint still advances after the last page,
 * covering every record. What changes, and is documented: if a later page fails, the pages before
 * it stay stored (the checkpoint does not advance, so the next run fetches them again).
 *
 * Invariant: a pair is streamed only when nothing can observe that `response` was never gathered:
 * the store is the LAST step of an action body or a loop body (their frames end there; a match
 * arm's steps run in the enclosing frame, so arms never stream), its key does not read
 * `response`, the fetch has no `updateFrom` (computed over the whole response), and the store
 * writes per batch cheaply (not a `file` store, which rewrites its file per batch).
 */
import type { ActionDecl, CallStep, FetchStep, Step, StoreDecl, StoreStep } from '../lang/ast.js';
import { walkExpr } from '../lang/check-expressions.js';

export type PagedFetch = FetchStep | CallStep;

/** The streamed pairs of these actions: fetch step → the store step it streams into. */
export function findStreamedSyncs(actions: Iterable<ActionDecl>, stores: ReadonlyMap<string, StoreDecl>): Map<PagedFetch, StoreStep> {
  const pairs = new Map<PagedFetch, StoreStep>();
  const scan = (steps: readonly Step[], ownsFrame: boolean): void => {
    for (const step of steps) {
      if (step.kind === 'For') scan(step.body, true);
      else if (step.kind === 'Match') {
        for (const arm of step.arms) if (arm.body.kind === 'Steps') scan(arm.body.steps, false);
      }
    }
    if (!ownsFrame || steps.length < 2) return;
    const fetch = steps[steps.length - 2]!;
    const store = steps[steps.length - 1]!;
    if ((fetch.kind === 'Fetch' || fetch.kind === 'Call') && store.kind === 'Store' && streamable(fetch, store, stores)) pairs.set(fetch, store);
  };
  for (const action of actions) scan(action.steps, true);
  return pairs;
}

function streamable(fetch: PagedFetch, store: StoreStep, stores: ReadonlyMap<string, StoreDecl>): boolean {
  const { options } = fetch;
  if (!options.paginate) return false;
  if (options.since && options.since.kind !== 'SinceExpr' && options.since.updateFrom) return false;
  const source = store.source;
  if (source.kind !== 'Ref' || source.leadingDot || source.parts.length !== 1 || source.parts[0] !== 'response') return false;
  let keyReadsResponse = false;
  walkExpr(store.key, (e) => {
    if (e.kind === 'Ref' && !e.leadingDot && e.parts[0] === 'response') keyReadsResponse = true;
  });
  if (keyReadsResponse) return false;
  const kind = stores.get(store.store.name)?.type.kind;
  return kind === 'memory' || kind === 'sql' || kind === 'nosql' || kind === 'postgrest';
}
