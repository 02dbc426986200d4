/**
 * `reqon verify` of a run that has not finished (killed mid-run, or paused) checks its log as far
 * as it goes, and says that is all it checked: "matches its log so far" with a "not checked" line
 * naming the run's status, and exits 3 (no divergence, not a whole check), never "verified" and 0.
 * Before, it printed the same "verified: … matches its log" as for a finished run, which a user
 * reads as "the run is verified".
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { FakeApi } from '../support/fake-api.js';
import { backends, type Backend } from '../support/temp-log.js';
import { describeResult, runIdOf } from './support/cli-build.js';
import { useCliMissions } from './support/cli-missions.js';

const CRASHING = `mission Notify {
  source Api { auth: none, base: "http://127.0.0.1:1" }
  store sent: memory("sent")
  action Send {
    get "/orders"
    for o in response {
      post "/notices" { body: { id: o.id } }
      store { id: o.id } -> sent { key: .id }
    }
  }
  run Send
}
`;

const PAUSING = `mission Approve {
  source Api { auth: none, base: "http://127.0.0.1:1" }
  store approvals: memory("approvals")
  action Ask {
    post "/approvals" { body: { doc: "D1" } }
    pause { duration: "2d", resumeOn: timeout }
    store { id: "D1", state: "final" } -> approvals { key: .id }
  }
  run Ask
}
`;

const missions = useCliMissions();

describe.each(backends)('%s: verify of a run that has not finished', (backend: Backend) => {
  /** The mission in the log's folder, and the API both missions call. */
  async function setup(text: string) {
    const api = new FakeApi();
    api.on('GET /orders', { body: [{ id: 'a' }, { id: 'b' }, { id: 'c' }] });
    api.on('POST /notices', { status: 201, body: { ok: true } });
    api.on('POST /approvals', { status: 201, body: { ticket: 't-1' } });
    const started = await missions.start(backend, 'reqon-verify-unfinished-', api);
    const mission = path.join(started.target.dir, 'mission.vague');
    fs.writeFileSync(mission, text);
    return { ...started, mission };
  }

  it('a killed run verifies "so far", naming what is not checked; once finished, in full', async () => {
    const { reqon, mission, api } = await setup(CRASHING);
    const killed = await reqon('run', mission, '--source', `Api=${api.url}`, '--crash-at', 'before-effect:3', '--quiet');
    expect(killed.signal, describeResult(killed)).toBe('SIGKILL');
    const runId = runIdOf(killed);
    const verifyCli = (...args: string[]) => reqon('verify', runId, ...args);

    const partial = await verifyCli();
    // No divergence in what there is, but not a whole check: 3, and no "verified".
    expect(partial.code, describeResult(partial)).toBe(3);
    expect(partial.stdout).toMatch(/^no divergence so far: replaying run \S+ matches its log so far \(/);
    expect(partial.stdout).toMatch(/not checked: what the run has yet to do — it is running and has not finished/);
    const json = JSON.parse((await verifyCli('--json')).stdout) as { ok: boolean; diverged: boolean; runStatus: string; verified: boolean; unchecked: string[] };
    // `ok` is what exit 0 says (a script reading it never takes this for a ✓); `diverged` is the divergence alone.
    expect(json).toMatchObject({ ok: false, diverged: false, runStatus: 'running', verified: false });
    expect(json.unchecked.at(-1)).toMatch(/^what the run has yet to do — it is running and has not finished/);

    const finish = await reqon('resume', runId, '--quiet');
    expect(finish.code, describeResult(finish)).toBe(0);
    const full = await verifyCli();
    expect(full.code, describeResult(full)).toBe(0);
    expect(full.stdout).toMatch(/^verified: replaying run \S+ matches its log \(/);
    expect(full.stdout).not.toMatch(/so far|not checked/);
    expect(JSON.parse((await verifyCli('--json')).stdout)).toMatchObject({ ok: true, diverged: false, runStatus: 'completed', verified: true, unchecked: [] });
  });

  it('a paused run verifies "so far" and says it is suspended', async () => {
    const { reqon, mission, api } = await setup(PAUSING);
    const paused = await reqon('run', mission, '--source', `Api=${api.url}`, '--quiet');
    const runId = runIdOf(paused);
    const verify = await reqon('verify', runId);
    expect(verify.code, describeResult(verify)).toBe(3);
    expect(verify.stdout).toMatch(/matches its log so far/);
    expect(verify.stdout).toMatch(/it is suspended and has not finished/);
  });
});
