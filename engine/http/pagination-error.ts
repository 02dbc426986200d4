/** A pagination that cannot go on as the mission says, or a page it must not take as it came. */
export class PaginationError extends Error {
  readonly code = 'pagination';
  constructor(message: string) {
    super(message);
    this.name = 'PaginationError';
  }
}
