/**
 * The one error type every store adapter and store helper throws.
 *
 * `code` is stable (the executor turns it into the `ErrorInfo.code` of a `step.failed` event) and
 * `retryable` is decided here, once, where the failure is understood: a lock held too long or a
 * PostgREST 503 may succeed later; a corrupt file, a bad target or a 400 will not.
 */

export type StoreErrorCode =
  /** A store target that would escape the data folder, or is otherwise unusable as a path. */
  | 'store.bad-target'
  /** An existing store file that does not hold a `{key: record}` JSON object. */
  | 'store.corrupt'
  /** Another writer held the store's lock for longer than we are willing to wait. */
  | 'store.lock-timeout'
  /** A value that cannot be stored (not an object) or a key that cannot be computed. */
  | 'store.bad-record'
  | 'store.bad-key'
  /** No endpoint configured for a `postgrest(...)` store, or a malformed one. */
  | 'store.config'
  /** The remote store answered with a non-2xx status or an unexpected body. */
  | 'store.http'
  /** The remote store could not be reached (refused, reset, timed out). */
  | 'store.transport'
  /** A file-system failure other than the above (permissions, disk full). */
  | 'store.io';

export class StoreError extends Error {
  constructor(
    readonly code: StoreErrorCode,
    message: string,
    readonly retryable: boolean = false,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'StoreError';
  }
}
