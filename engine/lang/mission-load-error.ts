/**
 * The one error loading a mission may throw: the path cannot be read as a mission (missing,
 * unreadable, a folder with no mission file). Everything wrong *inside* a mission's files is a
 * diagnostic instead. Kept apart from loader.ts so the CLI can recognise it without loading the
 * parser.
 */
export class MissionLoadError extends Error {
  override readonly name = 'MissionLoadError';
  constructor(
    message: string,
    /** The path as the caller gave it. */
    readonly path: string,
  ) {
    super(message);
  }
}
