/**
 * A loaded mission: the root file's program, the mission the executor runs (with the actions of
 * a folder mission's other files merged in) and the text of every file read, so diagnostics can
 * be rendered and spans resolved. Produced by `loader.ts`, read by the checker and the runtime.
 *
 * Invariant: every `file` named by a node or diagnostic of the unit has its text in `files`.
 */
import type { MissionDecl, Program } from './ast.js';

export interface SourceFile {
  path: string;
  text: string;
}

export interface MissionUnit {
  /** The program of the root file (the single file, or the folder's `mission.vague`). */
  root: Program;
  /** The first mission of the root file, with folder action files' actions appended; absent if none. */
  mission?: MissionDecl;
  /** Root file first, then the folder's action files in name order. */
  files: SourceFile[];
  /** Directory the mission lives in (OpenAPI `from` paths resolve against it). */
  dir: string;
  /**
   * A folder mission (loaded from a folder, or from more than one file): as upstream's folder
   * loader does, its pipeline's action names are checked as errors (E3010), not warnings (E3036).
   */
  folder?: boolean;
}
