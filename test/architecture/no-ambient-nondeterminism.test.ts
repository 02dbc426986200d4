/**
 * No engine module reads the clock, randomness or the network directly: they come through `Env`
 * (engine/env/env.ts) so that the journal can record them and replay them. The real
 * implementations live in engine/env/real-env.ts. The few other exceptions are listed with why.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '..', '..');

const FORBIDDEN: { name: string; re: RegExp }[] = [
  { name: 'Date.now()', re: /\bDate\.now\s*\(/ },
  { name: 'new Date() without an argument', re: /\bnew Date\(\s*\)/ },
  { name: 'Math.random()', re: /\bMath\.random\s*\(/ },
  { name: 'crypto.randomUUID()', re: /\brandomUUID\s*\(/ },
  { name: 'global fetch()', re: /(?<![.\w])fetch\s*\(/ },
  { name: 'performance.now()', re: /\bperformance\.now\s*\(/ },
];

/** file → why it may touch the real world. */
const ALLOWED: Record<string, string> = {
  'engine/env/real-env.ts': 'the one real implementation of Env',
  'engine/stores/file-lock.ts': 'waits between processes for a lock file; never recorded, and a fake clock would stall it',
  'engine/server/studio-server.ts': 'the studio server is not replayed engine code (session token)',
  'engine/server/studio-service.ts': 'the studio service is not replayed engine code (process supervision)',
  'engine/lang/check-values.ts': 'static checking is never replayed: a schedule time is judged past against the wall clock of the check (warning E3037)',
  'engine/server/crash-lab-proxy.ts': "the crash lab's proxy forwards a reference run's requests to the real API; not replayed engine code",
};

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return files(path);
    return name.endsWith('.ts') ? [path] : [];
  });
}

/** Source without comments and string contents, so prose mentioning Date.now() does not count. */
function code(text: string): string {
  return text
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/\/\/.*$/gm, '')
    .replace(/'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"/g, "''");
}

describe('no ambient non-determinism in the engine', () => {
  const engineFiles = files(join(ROOT, 'engine'));

  it('scans the engine', () => {
    expect(engineFiles.length).toBeGreaterThan(50);
  });

  it('only Env implementations (and the listed exceptions) touch clock, randomness or fetch', () => {
    const hits: string[] = [];
    for (const file of engineFiles) {
      const rel = relative(ROOT, file).split('\\').join('/');
      if (ALLOWED[rel]) continue;
      const text = code(readFileSync(file, 'utf8'));
      for (const { name, re } of FORBIDDEN) if (re.test(text)) hits.push(`${rel}: ${name}`);
    }
    expect(hits).toEqual([]);
  });

  it('the guard itself catches a violation', () => {
    expect(FORBIDDEN.some(({ re }) => re.test(code('const t = Date.now();')))).toBe(true);
    expect(FORBIDDEN.some(({ re }) => re.test(code('// Date.now() in a comment')))).toBe(false);
  });
});
