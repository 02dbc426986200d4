/** `reqon --version` names the package version and the log format, and exits 0. */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { LOG_FORMAT } from '../../engine/log/events.js';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const cli = path.join(repo, 'dist/engine/cli/main.js');
const pkg = JSON.parse(readFileSync(path.join(repo, 'package.json'), 'utf8')) as { version: string };

describe('reqon --version', () => {
  for (const flag of ['--version', '-V']) {
    it(`${flag} prints the version and log format on stdout and exits 0`, () => {
      const out = spawnSync(process.execPath, [cli, flag], { encoding: 'utf8' });
      expect(out.status).toBe(0);
      expect(out.stdout.trim()).toBe(`reqon ${pkg.version} (log format ${LOG_FORMAT})`);
      expect(out.stderr).toBe('');
    });
  }
});
