/**
 * A run never ends in a lie (issue "Hostile input"): whatever a hostile API answers — random
 * statuses, truncated bodies, resets mid-body, non-JSON, bodies over the source's
 * maxResponseBytes, invalid UTF-8, too-deep JSON, numbers JSON cannot hold, answers too slow for
 * the source's timeout — `reqon run` exits with the run's status as the log holds it: 0 only if
 * completed, 1 only if failed, 10 only if suspended; never 0 while the run is not completed, never
 * a run left `running` by a process that exited, never a stack trace. Property-based (fast-check)
 * over scripts of answers, against the built CLI.
 */
import fs from 'node:fs';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtCli, describeResult, runCli } from '../durability/support/cli-build.js';
import { readRunFacts } from '../durability/support/run-facts.js';
import { CrashPointsHandler } from '../../engine/inspect/crash-points.js';
import { runFold } from '../../engine/inspect/fold-handler.js';

const BEHAVIOURS = ['ok', 'status', 'truncated', 'reset', 'html', 'huge', 'badutf8', 'deep', 'bignum', 'slow', 'empty'] as const;
type Behaviour = (typeof BEHAVIOURS)[number];
interface Answer {
  behaviour: Behaviour;
  status: number;
}

const MISSION = `mission Hostile {
  source Api { auth: bearer, base: "http://127.0.0.1:1", timeout: 300, maxResponseBytes: 4000 }
  store out: sql("hostile_out")
  action Go {
    get "/a" { retry: { maxAttempts: 2, initialDelay: 5 } }
    for item in response {
      post "/b" { body: { id: item.id }, retry: { maxAttempts: 2, initialDelay: 5 } }
      store { id: item.id, r: response } -> out { key: .id }
    }
  }
  run Go
}
`;

let server: Server;
let url: string;
let script: Answer[] = [];
let served = 0;
/** Pick an answer by the request itself (not by how many came before), so a resume meets the same API. */
let byRequest = false;
let dir: string;
const TOKEN = 'tok-ABCDEFGH-12345678';

function answer(res: ServerResponse, a: Answer, isList: boolean): void {
  const json = (body: unknown, status = 200): void => void res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  const good = isList ? [{ id: 1 }, { id: 2 }] : { ok: true };
  switch (a.behaviour) {
    case 'ok':
      return json(good);
    case 'status':
      return json({ error: 'scripted' }, a.status);
    case 'empty':
      return void res.writeHead(a.status === 204 ? 204 : 200).end();
    case 'truncated':
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '500' });
      res.write('[{"id": 1},');
      return void res.end();
    case 'reset':
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('[{"id": 1}, {"id"');
      return void setTimeout(() => res.socket?.destroy(), 5);
    case 'html':
      return void res.writeHead(200, { 'content-type': 'text/html' }).end('<html>hello</html>');
    case 'huge':
      return json(Array.from({ length: 500 }, (_, i) => ({ id: i, pad: 'x'.repeat(20) })));
    case 'badutf8':
      res.writeHead(200, { 'content-type': 'application/json' });
      return void res.end(Buffer.from([0x5b, 0x22, 0xff, 0xfe, 0x22, 0x5d]));
    case 'deep':
      return void res.writeHead(200, { 'content-type': 'application/json' }).end('['.repeat(400) + ']'.repeat(400));
    case 'bignum':
      return void res.writeHead(200, { 'content-type': 'application/json' }).end(isList ? '[{"id": 1e400}]' : '{"n": -1e999}');
    case 'slow':
      return void setTimeout(() => json(good), 700);
  }
}

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reqon-exit-fuzz-'));
  fs.writeFileSync(path.join(dir, 'hostile.vague'), MISSION);
  // The token is echoed back by nothing here, but it rides on every request: it must never reach the log.
  fs.writeFileSync(path.join(dir, 'auth.json'), JSON.stringify({ Api: { type: 'bearer', token: TOKEN } }));
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const pick = byRequest ? [...`${req.method} ${req.url} ${body}`].reduce((h, c) => (h * 31 + c.charCodeAt(0)) >>> 0, 7) : served;
      served++;
      const a = script[pick % Math.max(1, script.length)] ?? { behaviour: 'ok', status: 200 };
      answer(res, a, (req.url ?? '').startsWith('/a'));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}, 180_000);

afterAll(async () => {
  server?.closeAllConnections();
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

const answers = fc.array(
  fc.record({
    behaviour: fc.constantFrom(...BEHAVIOURS),
    status: fc.constantFrom(200, 201, 204, 400, 404, 409, 422, 429, 500, 503),
  }),
  { minLength: 1, maxLength: 6 },
);

let round = 0;

describe('the CLI exit code is the run status, whatever the API answers', () => {
  it('exit 0 ⇔ completed, 1 ⇔ failed; nothing left running; no stack trace (fast-check)', async () => {
    await fc.assert(
      fc.asyncProperty(answers, async (s) => {
        script = s;
        served = 0;
        const db = path.join(dir, `r${round++}.db`);
        const result = await runCli(builtCli(), ['run', 'hostile.vague', '--source', `Api=${url}`, '--auth', 'auth.json', '--db', db, '--quiet'], {
          cwd: dir,
          env: { REQON_DATA_DIR: path.join(dir, 'data') },
          timeoutMs: 30_000,
        });
        const context = `${JSON.stringify(s)}\n${describeResult(result)}`;
        expect(result.signal, context).toBeNull();
        expect(result.stderr, context).not.toMatch(/internal error|\n\s+at /);
        const runId = /^run (\S+)$/m.exec(result.stdout)?.[1];
        expect(runId, context).toBeDefined();
        const { run, events } = await readRunFacts(db, runId!, []);
        const expected = { completed: 0, failed: 1, suspended: 10, running: -1 }[run.status];
        expect(result.code, `${context}\nstatus ${run.status}`).toBe(expected);
        // The log ends with the run's end, and says why when it failed.
        const last = events.at(-1)!;
        expect(last.type, context).toBe(run.status === 'completed' ? 'run.completed' : 'run.failed');
        if (run.status === 'failed') expect(result.stdout, context).toMatch(/^failed: \S/m);
        expect(JSON.stringify(events), context).not.toContain(TOKEN);
      }),
      { numRuns: Number(process.env.REQON_PROPERTY_RUNS ?? 20) },
    );
  }, 600_000);

  it('a crash at any offered point, then resumes: the same end and the same stores as the crash-free run (fast-check)', async () => {
    byRequest = true;
    try {
      await fc.assert(
        fc.asyncProperty(answers, fc.nat(), async (s, pick) => {
          script = s;
          const reference = await runHostile(null);
          const offered = runFold(new CrashPointsHandler(), reference.events).flatMap((p) => Array.from({ length: p.occurrences }, (_, i) => `${p.point}:${i + 1}`));
          fc.pre(offered.length > 0);
          const crashAt = offered[pick % offered.length]!;
          const crashed = await runHostile(crashAt);
          const context = `${JSON.stringify(s)} crash at ${crashAt}`;
          expect(crashed.killed, context).toBe(true);
          expect(crashed.status, context).toBe(reference.status);
          expect(crashed.rows, context).toEqual(reference.rows);
          expect(JSON.stringify(crashed.events), context).not.toContain(TOKEN);
        }),
        { numRuns: Number(process.env.REQON_PROPERTY_RUNS ?? 12) },
      );
    } finally {
      byRequest = false;
    }
  }, 600_000);
});

/** Runs the hostile mission to its end, armed with `crashAt` until it kills once, then resumed unarmed. */
async function runHostile(crashAt: string | null) {
  const db = path.join(dir, `r${round++}.db`);
  const env = { REQON_DATA_DIR: path.join(dir, 'data') };
  const armed = crashAt ? ['--crash-at', crashAt] : [];
  let result = await runCli(builtCli(), ['run', 'hostile.vague', '--source', `Api=${url}`, '--auth', 'auth.json', '--db', db, '--quiet', ...armed], { cwd: dir, env, timeoutMs: 30_000 });
  const runId = /^run (\S+)$/m.exec(result.stdout)![1]!;
  let killed = false;
  for (let i = 0; result.signal === 'SIGKILL' && i < 4; i++) {
    killed = true;
    result = await runCli(builtCli(), ['resume', runId, '--db', db, '--quiet'], { cwd: dir, env, timeoutMs: 30_000 });
  }
  expect(result.signal, describeResult(result)).toBeNull();
  const facts = await readRunFacts(db, runId, ['hostile_out']);
  expect(result.code, describeResult(result)).toBe({ completed: 0, failed: 1, suspended: 10, running: -1 }[facts.run.status]);
  return { killed, status: facts.run.status, rows: facts.tables.hostile_out, events: facts.events };
}
