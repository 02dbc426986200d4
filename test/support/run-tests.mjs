// `npm test`: the Vitest suites (unit, integration, durability, conformance) and the e2e suite
// (Chromium), one after the other, then one closing line with the totals of both.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..', '..');
const summary = join(root, 'test-results', 'summary.jsonl');
rmSync(summary, { force: true });

const vitest = join(root, 'node_modules', 'vitest', 'vitest.mjs');
const suites = [
  ['unit, integration, durability, conformance', 'test/vitest.config.ts'],
  ['e2e (the studio in Chromium)', 'e2e/vitest.config.ts'],
];
let exit = 0;
for (const [name, config] of suites) {
  process.stdout.write(`\n=== ${name} ===\n`);
  const result = spawnSync(process.execPath, [vitest, 'run', '--config', config], { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) exit = 1;
}

const totals = { passed: 0, failed: 0, skipped: 0 };
const lines = existsSync(summary) ? readFileSync(summary, 'utf8').trim().split('\n').filter(Boolean) : [];
for (const line of lines) {
  const counts = JSON.parse(line);
  for (const key of Object.keys(totals)) totals[key] += counts[key];
}
if (lines.length < suites.length) {
  // A suite that died before reporting counts as a failure.
  totals.failed += suites.length - lines.length;
  exit = 1;
}
process.stdout.write(`\ntotal: ${totals.passed} passed, ${totals.failed} failed, ${totals.skipped} skipped\n`);
process.exit(exit || (totals.failed > 0 ? 1 : 0));
