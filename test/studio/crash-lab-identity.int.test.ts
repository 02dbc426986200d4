/**
 * The crash lab on requests that differ only in a request header or in their body, sent by a
 * concurrent loop, with the real CLI. The proxy matched answers by method and URL in arrival
 * order, and the reference recorded them in the order the API finished them: the API answers
 * EUR last, so the armed run's EUR request (sent first) got USD's recorded price and note, the
 * stores differed, and the lab said ✗ for a mission that survives. Answers now go by the
 * request's whole identity (method, URL, the mission's headers, the body with the run's
 * now()/random() values and id taken out), in order among identical requests only.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createStudioService, type StudioService } from '../../engine/server/studio-service.js';
import { builtEngine } from '../support/built-engine.js';
import { FakeApi } from '../support/fake-api.js';

const REPO = path.resolve(new URL('../..', import.meta.url).pathname);
const MISSION = path.join(REPO, 'assets/language/crash-lab-identity.vague');
const PRICES: Record<string, number> = { EUR: 1.1, USD: 1 };
const slow = (code: unknown) => new Promise((r) => setTimeout(r, code === 'EUR' ? 400 : 0));

describe('crash lab on requests told apart by a header or a body', () => {
  let dir: string;
  let api: FakeApi;
  let service: StudioService;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reqon-lab-identity-'));
    fs.copyFileSync(MISSION, path.join(dir, 'identity.vague'));
    let serial = 0;
    api = await new FakeApi()
      .on('GET /currencies', { body: [{ code: 'EUR' }, { code: 'USD' }] })
      // EUR is answered last: the reference records USD's answers first.
      .on('GET /price', async (req) => {
        const code = req.headers['x-currency'];
        await slow(code);
        return { body: { price: PRICES[String(code)] ?? null } };
      })
      .on('POST /notes', async (req) => {
        const code = (req.body as { code?: string }).code;
        await slow(code);
        return { status: 201, body: { note: `${code}-${++serial}` } };
      })
      .start();
    service = await createStudioService({ dbPath: path.join(dir, 'reqon.db'), cliPath: builtEngine().cli, cwd: dir, pollIntervalMs: 50, worker: false });
  }, 180_000);

  afterAll(async () => {
    await service?.close();
    await api?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('answers each request with what the reference got for that request', async () => {
    const started = await service.handle('crashlab.start', { missionPath: path.join(dir, 'identity.vague'), sources: { Api: api.url }, crashAt: 'after-effect:4' });
    const done = await service.labSettled(started.labId);
    expect(done.error).toBeNull();
    expect(done.processes.map((p) => `${p.command}:${p.signal ?? p.code}`)).toEqual(['run:SIGKILL', 'resume:0']);
    expect(done.verdict!.storeDiff).toEqual([]);
    expect(Object.fromEntries(done.verdict!.checks.map((c) => [c.name, c.ok]))).toEqual({ completed: true, stores: true, writes: true, requests: true, replay: true });
    expect(done.verdict).toMatchObject({ ok: true, tested: true, crashes: 1, finalStatus: 'completed' });
    // Only the reference reached the API.
    expect(api.requests.length).toBe(5);
  }, 180_000);
});
