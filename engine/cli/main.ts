#!/usr/bin/env node
/**
 * `reqon` — the package's bin. Runs the CLI program (program.ts) from its one-file bundle when that
 * bundle was built from the modules now in dist/, else from those modules (cli-bundle.ts).
 */
import { startBundle } from './cli-bundle.js';

if (!startBundle()) await import('./program.js');
