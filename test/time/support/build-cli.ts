/**
 * The compiled engine (CLI included) and this suite's child fixtures, for the tests that spawn
 * real processes (shared build: test/support/built-engine.ts).
 */
import { builtEngine, REPO } from '../../support/built-engine.js';

export { REPO };

export interface CliBuild {
  /** Absolute path of the compiled `reqon` entry point. */
  cli: string;
  /** Absolute path of a compiled fixture, e.g. `fixture('resume-racer')`. */
  fixture(name: string): string;
}

/** The CLI and this suite's child fixtures, compiled by test/support/built-engine.ts. */
export function buildCli(): CliBuild {
  const build = builtEngine();
  return { cli: build.cli, fixture: (name) => build.file(`test/time/fixtures/${name}.ts`) };
}
