/**
 * `reqon --version`: the package's version, and the formats this engine reads and writes — what a
 * bug report needs to say which logs it can open.
 */
import { readFileSync } from 'node:fs';
import { LOG_FORMAT } from '../log/events.js';

/** The package root is three levels above this file, in `dist/engine/cli/` as in `engine/cli/`. */
const PACKAGE_JSON = new URL('../../../package.json', import.meta.url);

export function versionLine(): string {
  let version = 'unknown';
  try {
    const pkg = JSON.parse(readFileSync(PACKAGE_JSON, 'utf8')) as { version?: unknown };
    if (typeof pkg.version === 'string') version = pkg.version;
  } catch {
    // An installed copy without its package.json still answers, saying it does not know.
  }
  return `reqon ${version} (log format ${LOG_FORMAT})`;
}
