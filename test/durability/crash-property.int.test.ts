/**
 * Property (fast-check): random small missions × random crash points × an API whose answers are
 * random (a pure function of a seed and the request, so two runs asking the same get the same):
 * a run crashed at any offered crash point — and crashed again on a resume — and resumed to its
 * end has the same stores as a crash-free run served the same answers, and every POST was
 * applied exactly once, the same POSTs as the crash-free run's.
 *
 * The crash points are the ones the studio's fold offers for the crash-free run (so each is one
 * the run really reaches); the run goes through the built CLI, killed by SIGKILL. On every log
 * backend (test/support/temp-log.ts), each run on a fresh log of its own.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CrashPointsHandler } from '../../engine/inspect/crash-points.js';
import { runFold } from '../../engine/inspect/fold-handler.js';
import { builtCli, describeResult, runCli, runIdOf, type CliResult } from './support/cli-build.js';
import { backends, tempLogTarget, type Backend, type TempLogTarget } from '../support/temp-log.js';
import { readRunFacts } from './support/run-facts.js';

interface Shape {
  items: number;
  post: boolean;
  store: 'sql' | 'memory' | 'file';
  pause: boolean;
  tail: boolean;
  seed: number;
}

const STORE_DECL = { sql: 'sql("prop_rows")', memory: 'memory("rows")', file: 'file("prop_rows")' };

function missionText(s: Shape): string {
  const body = [
    s.post ? '      post "/ack" { body: { id: item.id, v: item.v } }' : '',
    `      store { id: item.id, v: item.v${s.post ? ', receipt: response.receipt' : ''} } -> rows { key: .id }`,
  ].filter(Boolean);
  return [
    'mission Prop {',
    '  source Api { auth: none, base: "http://127.0.0.1:1" }',
    `  store rows: ${STORE_DECL[s.store]}`,
    '  store seen: memory("seen")',
    '  action A {',
    `    get "/list/${s.seed}"`,
    '    for item in response {',
    ...body,
    '    }',
    s.pause ? '    pause { duration: "1ms" }' : '',
    s.tail ? `    get "/one/${s.seed}"\n    store response -> seen { key: .id }` : '',
    '  }',
    '  run A',
    '}',
    '',
  ]
    .filter((l) => l !== '')
    .join('\n');
}

const h = (text: string): string => createHash('sha256').update(text).digest('hex').slice(0, 12);

/** Answers are random but a pure function of the request: the same ask, the same answer. */
class SeededApi {
  private server: Server | undefined;
  url = '';
  /** Idempotency-Key → the body it applied (a key is applied once: this API honours keys). */
  applied = new Map<string, string>();
  items = 0;

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      let text = '';
      req.on('data', (c: Buffer) => (text += c.toString()));
      req.on('end', () => {
        const url = req.url ?? '/';
        let body: unknown;
        if (req.method === 'GET' && url.startsWith('/list/')) {
          body = Array.from({ length: this.items }, (_, i) => ({ id: `i${i}`, v: h(`${url}:${i}`) }));
        } else if (req.method === 'GET' && url.startsWith('/one/')) {
          body = { id: 'one', x: h(url) };
        } else if (req.method === 'POST' && url === '/ack') {
          const key = String(req.headers['idempotency-key']);
          // Like an API that honours keys: a replayed key is answered, not applied again.
          if (!this.applied.has(key)) this.applied.set(key, text);
          body = { receipt: h(text) };
        } else {
          res.writeHead(404).end();
          return;
        }
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      });
    });
    await new Promise<void>((r) => this.server!.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  reset(items: number): void {
    this.items = items;
    this.applied = new Map();
  }

  /** The POST bodies applied, sorted: what the world saw, whatever the keys (they name the run). */
  appliedBodies(): string[] {
    return [...this.applied.values()].sort();
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((r) => (this.server ? this.server.close(() => r()) : r()));
  }
}

let cli: string;
let root: string;
let api: SeededApi;
let counter = 0;
/** The logs of the current property case, dropped when it ends. */
const targets: TempLogTarget[] = [];

async function dropTargets(): Promise<void> {
  for (const target of targets.splice(0)) await target.drop();
}

beforeAll(async () => {
  cli = builtCli();
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'reqon-crash-prop-'));
  api = new SeededApi();
  await api.start();
}, 180_000);

afterAll(async () => {
  await api?.stop();
  await dropTargets();
  if (root) fs.rmSync(root, { recursive: true, force: true });
});

interface Ended {
  runId: string;
  db: string;
  dir: string;
  kills: number;
}

/**
 * Runs the mission to its end, resumed after every kill and pause. `crashes[0]` arms every
 * process until one is killed, then `crashes[1]` the processes after it, and so on.
 */
async function runToEnd(backend: Backend, file: string, crashes: (string | null)[]): Promise<Ended> {
  const target = await tempLogTarget(backend, 'reqon-crash-prop-run-');
  targets.push(target);
  const { dir, target: db } = target;
  const env = { REQON_DATA_DIR: path.join(dir, 'data') };
  let next = 0;
  const armed = (): string[] => (crashes[next] ? ['--crash-at', crashes[next]!] : []);
  const results: CliResult[] = [];
  let result = await runCli(cli, ['run', file, '--source', `Api=${api.url}`, '--db', db, '--quiet', ...armed()], { cwd: dir, env });
  results.push(result);
  const runId = runIdOf(result);
  let kills = 0;
  for (let round = 1; result.code !== 0; round++) {
    if (round > 8) throw new Error(`run ${runId} did not end:\n${results.map(describeResult).join('\n')}`);
    if (result.signal === 'SIGKILL') {
      kills++;
      next++;
    } else expect(result.code, results.map(describeResult).join('\n')).toBe(10);
    await new Promise((r) => setTimeout(r, 5));
    result = await runCli(cli, ['resume', runId, '--db', db, '--quiet', ...armed()], { cwd: dir, env });
    results.push(result);
  }
  return { runId, db, dir, kills };
}

async function stores(end: Ended): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  for (const store of ['rows', 'seen']) {
    const r = await runCli(cli, ['store', end.runId, store, '--json', '--db', end.db], { cwd: end.dir, env: { REQON_DATA_DIR: path.join(end.dir, 'data') } });
    expect(r.code, describeResult(r)).toBe(0);
    out[store] = JSON.parse(r.stdout) as unknown;
  }
  return out;
}

const shape = fc.record({
  items: fc.integer({ min: 0, max: 4 }),
  post: fc.boolean(),
  store: fc.constantFrom<'sql' | 'memory' | 'file'>('sql', 'memory', 'file'),
  pause: fc.boolean(),
  tail: fc.boolean(),
  seed: fc.integer({ min: 1, max: 1_000_000 }),
});

describe.each(backends)('%s: crash anywhere, resume: the same stores and effects as a crash-free run', (backend) => {
  it('random missions × random crash points × random answers', async () => {
    await fc.assert(
      fc.asyncProperty(shape, fc.integer({ min: 0, max: 1_000_000 }), fc.integer({ min: 0, max: 1_000_000 }), async (s, pick, pickAgain) => {
        try {
          const file = path.join(root, `mission-${counter++}.vague`);
          fs.writeFileSync(file, missionText(s));

          api.reset(s.items);
          const reference = await runToEnd(backend, file, []);
          const refStores = await stores(reference);
          const refBodies = api.appliedBodies();
          const offered = runFold(new CrashPointsHandler(), (await readRunFacts(reference.db, reference.runId, [])).events).flatMap((p) =>
            Array.from({ length: p.occurrences }, (_, i) => `${p.point}:${i + 1}`),
          );
          fc.pre(offered.length > 0);
          const first = offered[pick % offered.length]!;
          // Sometimes the resume is killed too, at a later point of the same run.
          const again = pickAgain % 3 === 0 ? offered[pickAgain % offered.length]! : null;

          api.reset(s.items);
          const crashed = await runToEnd(backend, file, [first, again]);
          expect(crashed.kills, `${first} must kill the run (offered by the fold)`).toBeGreaterThanOrEqual(1);
          expect(await stores(crashed), `${missionText(s)}\ncrash at ${first}${again ? `, then ${again}` : ''}`).toEqual(refStores);
          // Each logical POST applied once: the same bodies as the crash-free run, none under two keys.
          expect(api.appliedBodies()).toEqual(refBodies);
        } finally {
          await dropTargets();
        }
      }),
      { numRuns: Number(process.env.REQON_PROPERTY_RUNS ?? 10) },
    );
  }, 600_000);
});
