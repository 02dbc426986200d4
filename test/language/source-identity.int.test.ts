/**
 * assets/language/source-identity.vague: two sources of one API (the same base URL) under
 * different credentials. A request's source is part of its replay identity: an edit that sends a
 * recorded request through the other source (`from Alpha` → `from Beta`) asks another account,
 * so replaying it must diverge — not answer it with Alpha's recorded response.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { verifyRun } from '../../engine/executor/verify.js';
import { openConformance, REPO, writeAuthFile, type Conformance } from '../conformance/harness.js';

const ENTRY = path.join(REPO, 'assets/language/source-identity.vague');
const TEXT = fs.readFileSync(ENTRY, 'utf8');

let c: Conformance;

beforeEach(async () => {
  c = await openConformance();
  c.api.on('GET /me', (req) => ({ body: [{ id: 1, as: req.headers.authorization === 'Bearer alpha-token-1234' ? 'alpha' : 'beta' }] }));
});

afterEach(async () => {
  await c.close();
});

describe('a request source in its replay identity', () => {
  it('diverges when an edit sends a recorded request through another source with the same URL', async () => {
    const authFile = writeAuthFile(c.dir, { Alpha: { type: 'bearer', token: 'alpha-token-1234' }, Beta: { type: 'bearer', token: 'beta-token-5678' } });
    const result = await c.start({ entry: ENTRY, files: [{ path: ENTRY, text: TEXT }] }, { sources: { Alpha: c.api.url, Beta: c.api.url }, authFile });
    expect(result.status).toBe('completed');
    expect(await c.store(result.runId, 'seen')).toEqual({ 1: { id: 1, as: 'alpha' } });
    await c.expectVerified(result.runId);

    const edited = c.mission('edited', TEXT.replace('get "/me" from Alpha', 'get "/me" from Beta'));
    const report = await verifyRun(c.log, result.runId, { missionFiles: edited, env: c.env });
    expect(report.ok).toBe(false);
    expect(report.divergence).toMatchObject({ stepPath: 'Fetch/0', cause: 'edit' });
    expect(report.divergence!.change).toMatch(/^the source of GET \/me changed \(Alpha became Beta/);
  });
});
