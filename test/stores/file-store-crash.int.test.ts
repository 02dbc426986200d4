/**
 * The file store under real process death and real contention: children that import the compiled
 * store are SIGKILLed mid-write in a loop, and several children write the same file at once.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileEngineFolders } from './helpers/compile-engine.js';

let work: string;
let dataDir: string;
const children = new Set<ChildProcess>();

beforeAll(() => {
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'reqon-file-crash-'));
  dataDir = path.join(work, 'data');
  compileEngineFolders(work, ['stores', 'env']);
  fs.writeFileSync(
    path.join(work, 'crash-writer.mjs'),
    `import { openFileStore } from './engine/stores/file-store.js';
const [dataDir, target, start] = process.argv.slice(2);
const store = openFileStore(dataDir, target);
const pad = 'x'.repeat(400);
for (let n = Number(start); ; n++) {
  await store.write([{ key: 'r' + String(n).padStart(5, '0'), record: { n, pad }, op: 'set' }]);
  process.stdout.write(n + '\\n');
}
`,
  );
  fs.writeFileSync(
    path.join(work, 'contender.mjs'),
    `import { openFileStore } from './engine/stores/file-store.js';
const [dataDir, target, prefix, count] = process.argv.slice(2);
const store = openFileStore(dataDir, target);
for (let n = 0; n < Number(count); n++) {
  await store.write([
    { key: prefix + '-' + String(n).padStart(3, '0'), record: { prefix, n }, op: 'set' },
    { key: 'shared', record: { [prefix + n]: true }, op: 'upsert' },
  ]);
}
`,
  );
});

afterAll(() => {
  for (const child of children) child.kill('SIGKILL');
  fs.rmSync(work, { recursive: true, force: true });
});

function run(script: string, args: string[]): { child: ChildProcess; exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }> } {
  const child = spawn(process.execPath, [path.join(work, script), ...args], { cwd: work, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>((resolve) =>
    child.on('exit', (code, signal) => {
      children.delete(child);
      resolve({ code, signal, stderr });
    }),
  );
  return { child, exited };
}

/** Parses the store file and checks it holds exactly r00000 … r(m-1); returns m. */
function readPrefix(file: string): number {
  if (!fs.existsSync(file)) return 0;
  const parsed = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, { n: number }>;
  const keys = Object.keys(parsed);
  keys.forEach((key, i) => {
    expect(key).toBe(`r${String(i).padStart(5, '0')}`);
    expect(parsed[key]!.n).toBe(i);
  });
  return keys.length;
}

describe('file store: crash safety', () => {
  it('SIGKILL at any moment leaves a whole file holding a prefix of the writes, with every acknowledged write', async () => {
    const file = path.join(dataDir, 'crash', 'orders.json');
    let count = 0;
    const rounds = 16;
    for (let round = 0; round < rounds; round++) {
      const { child, exited } = run('crash-writer.mjs', [dataDir, 'crash/orders', String(count)]);
      let acknowledged = count - 1;
      let buffered = '';
      const started = new Promise<void>((resolve) => {
        child.stdout!.on('data', (chunk: Buffer) => {
          buffered += chunk.toString();
          const lines = buffered.split('\n');
          buffered = lines.pop()!;
          for (const line of lines) acknowledged = Number(line);
          if (acknowledged >= count) resolve();
        });
      });
      await Promise.race([started, exited]);
      // Vary the moment of death over the write cycle (open, write, fsync, rename, dir fsync, lock).
      await new Promise((resolve) => setTimeout(resolve, (round * 7) % 41));
      child.kill('SIGKILL');
      const { signal, stderr } = await exited;
      expect(stderr).toBe('');
      expect(signal).toBe('SIGKILL');

      const next = readPrefix(file);
      expect(next).toBeGreaterThan(acknowledged); // nothing acknowledged was lost
      expect(next).toBeLessThanOrEqual(acknowledged + 2); // at most the one in flight was added
      count = next;
    }
    expect(count).toBeGreaterThan(rounds);

    // A later writer clears what the killed ones left (lock of a dead pid, temp files) and carries on.
    const { child, exited } = run('crash-writer.mjs', [dataDir, 'crash/orders', String(count)]);
    await new Promise<void>((resolve) => child.stdout!.once('data', () => resolve()));
    child.kill('SIGKILL');
    await exited;
    readPrefix(file);
    const leftovers = fs.readdirSync(path.dirname(file)).filter((name) => name.endsWith('.tmp'));
    expect(leftovers.length).toBeLessThanOrEqual(1); // only the last victim's, if it died mid-write
  }, 180_000); // 16 kill-and-restart rounds of a child process: slow on a loaded 2-core machine

  it('several processes writing the same store at once lose no record and no merged field', async () => {
    const prefixes = ['a', 'b', 'c'];
    const count = 40;
    const results = await Promise.all(prefixes.map((prefix) => run('contender.mjs', [dataDir, 'contended', prefix, String(count)]).exited));
    for (const result of results) expect(result).toStrictEqual({ code: 0, signal: null, stderr: '' });

    const parsed = JSON.parse(fs.readFileSync(path.join(dataDir, 'contended.json'), 'utf8')) as Record<string, Record<string, unknown>>;
    expect(Object.keys(parsed)).toHaveLength(prefixes.length * count + 1);
    for (const prefix of prefixes) {
      for (let n = 0; n < count; n++) expect(parsed[`${prefix}-${String(n).padStart(3, '0')}`]).toStrictEqual({ prefix, n });
    }
    expect(Object.keys(parsed['shared']!)).toHaveLength(prefixes.length * count);
    expect(fs.existsSync(path.join(dataDir, 'contended.json.lock'))).toBe(false);
  }, 180_000);
});
