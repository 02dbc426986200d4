/**
 * A request path placeholder no variable binds (upstream's github-sync writes
 * `get "/repos/{GITHUB_OWNER}/…"` and binds nothing): `reqon check` warns E3041 at the
 * placeholder, and a run given no setting of that name fails before sending anything, naming
 * the placeholder, the request's line and how to bind it. Given `--env GITHUB_OWNER=…` (a bare
 * placeholder reads the run's setting of its name), or bound with `let … = env(…)`, the same
 * request is sent, encoded; a variable of that name wins over the setting.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { checkSource } from '../../engine/lang/loader.js';
import { openConformance, type Conformance } from '../conformance/harness.js';

const mission = (bind: string) => `mission Repo {
  source Api { auth: none, base: "https://api.test" }
  store issues: memory("issues")
  action FetchIssues {
${bind}
    get "/repos/{GITHUB_OWNER}/{GITHUB_REPO}/issues"
    store response -> issues { key: .id }
  }
  run FetchIssues
}
`;

let c: Conformance;

beforeEach(async () => {
  c = await openConformance();
  c.api.on('GET /repos/acme%20corp/widgets/issues', { body: [{ id: 1, title: 'bug' }] });
});

afterEach(async () => {
  await c.close();
});

function files(text: string) {
  const entry = path.join(c.dir, 'repo.vague');
  fs.writeFileSync(entry, text);
  return { entry, files: [{ path: entry, text }] };
}

describe('an unbound path placeholder', () => {
  it('is warned about at check time, and the run fails at that request naming it, its line and the fix', async () => {
    const text = mission('    // nothing binds GITHUB_OWNER or GITHUB_REPO');
    expect(checkSource(text, 'repo.vague').map((d) => `${d.severity} ${d.code} ${text.slice(d.span.start, d.span.end)}`)).toEqual([
      'warning E3041 {GITHUB_OWNER}',
      'warning E3041 {GITHUB_REPO}',
    ]);
    const result = await c.start(files(text));
    expect(result.status).toBe('failed');
    expect(result.status === 'failed' && result.error.message).toBe(
      'Path parameter {GITHUB_OWNER} (line 6) did not resolve: no variable `GITHUB_OWNER` is bound here and the run has no setting of that name; bind it before the request in this action, e.g. `let GITHUB_OWNER = env("GITHUB_OWNER")`, or give the run `--env GITHUB_OWNER=…`',
    );
    expect(c.api.requests).toEqual([]);
  });

  it('unbound, is read from the run\'s --env setting of that name, and replays to the same request', async () => {
    const text = mission('    // GITHUB_OWNER and GITHUB_REPO come from the run\'s settings');
    const result = await c.start(files(text), { env: { GITHUB_OWNER: 'acme corp', GITHUB_REPO: 'widgets' } });
    expect(result.status === 'completed' ? 'completed' : JSON.stringify(result)).toBe('completed');
    expect(c.api.requests.map((r) => r.url)).toEqual(['/repos/acme%20corp/widgets/issues']);
    expect(await c.store(result.runId, 'issues')).toEqual({ 1: { id: 1, title: 'bug' } });
  });

  it('a variable of the same name wins over the setting', async () => {
    const text = mission('    let GITHUB_OWNER = "acme corp"');
    const result = await c.start(files(text), { env: { GITHUB_OWNER: 'someone else', GITHUB_REPO: 'widgets' } });
    expect(result.status === 'completed' ? 'completed' : JSON.stringify(result)).toBe('completed');
    expect(c.api.requests.map((r) => r.url)).toEqual(['/repos/acme%20corp/widgets/issues']);
  });

  it('bound with let … = env(…), checks clean and sends the request with the values encoded', async () => {
    const text = mission('    let GITHUB_OWNER = env("GITHUB_OWNER")\n    let GITHUB_REPO = env("GITHUB_REPO")');
    expect(checkSource(text, 'repo.vague')).toEqual([]);
    const result = await c.start(files(text), { env: { GITHUB_OWNER: 'acme corp', GITHUB_REPO: 'widgets' } });
    expect(result.status === 'completed' ? 'completed' : JSON.stringify(result)).toBe('completed');
    expect(c.api.requests.map((r) => r.url)).toEqual(['/repos/acme%20corp/widgets/issues']);
    expect(await c.store(result.runId, 'issues')).toEqual({ 1: { id: 1, title: 'bug' } });
  });
});
