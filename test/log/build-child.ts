/**
 * The compiled child fixture of the log's multi-process and fsync tests (shared build:
 * test/support/built-engine.ts, which compiles it with the engine).
 */
import { builtEngine, REPO } from '../support/built-engine.js';

export { REPO };

export interface ChildBuild {
  dir: string;
  /** Absolute path of the compiled fixture script. */
  script: string;
  /** Nothing to remove: the build is shared and cleaned up by age. */
  cleanup(): void;
}

export function buildChild(): ChildBuild {
  const build = builtEngine();
  return { dir: build.root, script: build.file('test/log/fixtures/log-child.ts'), cleanup: () => {} };
}
