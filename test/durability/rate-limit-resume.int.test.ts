/**
 * A source's rate limiter under replay. Its state — the window an API announced (remaining 0
 * until a reset), a Retry-After — is the process's, not the log's: a run killed while it waited
 * for the window to reset sent its next request at once after the resume, was answered 429, and
 * ended "completed with 1 failure" with records missing where a run without the crash completed
 * (helper 36). Replayed answers are now told to the limiter at the instant they were recorded,
 * so the resume waits out what is left of the window — in a loop of requests, and in a streamed
 * sync whose resume takes its finished pages as recorded. On both backends.
 */
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { openConformance, type Conformance } from '../conformance/harness.js';
import type { FakeReply } from '../support/fake-api.js';
import { backends } from '../support/temp-log.js';
import { builtCli, killableRun } from './support/cli-build.js';

/** Seconds of the API's window: after each answer, nothing more until it resets. */
const RESET = 2;

const MISSION = `mission Limited {
  source Api { auth: none, base: "http://127.0.0.1:1", rateLimit: { strategy: pause, maxWait: 10 } }
  store out: memory("out")
  action Sync {
    for p in [1, 2, 3] {
      get "/items" { params: { page: p }, retry: { maxAttempts: 1 } }
      store each response.items -> out { key: .id }
    }
  }
  run Sync
}
`;

/** The same window over a streamed sync: each page stored as it arrives, finished pages skipped on resume. */
const STREAMED = `mission LimitedSync {
  source Api { auth: none, base: "http://127.0.0.1:1", rateLimit: { strategy: pause, maxWait: 10 } }
  store out: sql("out")
  action Sync {
    get "/items" { paginate: page(page, 2), retry: { maxAttempts: 1 } }
    store response -> out { key: .id }
  }
  run Sync
}
`;

let cli: string;
beforeAll(() => {
  cli = builtCli();
}, 180_000);

describe.each(backends)('a rate-limit window the run was waiting out when killed (%s)', (backend) => {
  let h: Conformance;
  beforeEach(async () => {
    h = await openConformance({ backend });
  });
  afterEach(async () => {
    await h.close();
  });

  /**
   * Serves page N's records (`body(N)`) announcing a RESET-second window after each answer (429
   * with a Retry-After inside it), and kills the run half a second after the second answer, while
   * it waits for the window; returns the counts once the run died.
   */
  async function killedInWindow(name: string, text: string, body: (page: number) => unknown): Promise<{ runId: string; counts: { answered: number; refused: number } }> {
    let until = 0;
    const counts = { answered: 0, refused: 0 };
    let kill: (() => void) | undefined;
    h.api.on('GET /items?*', (req): FakeReply => {
      const now = Date.now();
      if (now < until) {
        counts.refused++;
        return { status: 429, headers: { 'retry-after': String(Math.ceil((until - now) / 1000)) }, body: { error: 'slow down' } };
      }
      until = now + RESET * 1000;
      if (++counts.answered === 2) setTimeout(() => kill?.(), 500);
      const page = Number(new URL(req.url, 'http://x').searchParams.get('page'));
      return { headers: { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(RESET) }, body: body(page) };
    });
    const run = killableRun(cli, ['run', h.mission(name, text).entry, '--db', h.dbPath, '--source', `Api=${h.api.url}`], { cwd: h.dir });
    kill = () => run.kill();
    const runId = await run.died;
    expect(counts.answered).toBe(2);
    return { runId, counts };
  }

  it('is waited out after the resume: every page answered, none refused', { timeout: 120_000 }, async () => {
    const { runId, counts } = await killedInWindow('limited', MISSION, (page) => ({ items: [{ id: `a${page}` }, { id: `b${page}` }] }));
    const resumed = await h.resume(runId, { by: 'api' });
    expect(resumed.status).toBe('completed');
    expect(resumed.status === 'completed' ? resumed.tolerated : []).toEqual([]);
    expect(counts.refused).toBe(0);
    expect(Object.keys(await h.store(resumed.runId, 'out')).sort()).toEqual(['a1', 'a2', 'a3', 'b1', 'b2', 'b3']);
  });

  it("is waited out after a streamed sync's resume, which takes its finished pages as recorded", { timeout: 120_000 }, async () => {
    const { runId, counts } = await killedInWindow('limited-sync', STREAMED, (page) => (page <= 3 ? [{ id: `a${page}` }, { id: `b${page}` }] : []));
    const progress: string[] = [];
    const resumed = await h.resume(runId, { by: 'api' }, { progress: (line) => progress.push(line) });
    expect(resumed.status).toBe('completed');
    // Page 1 is taken as recorded (the log shows page 2 asked for after it); page 2, the last
    // answered before the kill, is walked, and its recorded answer tells the limiter the window.
    expect(progress.some((line) => /1 finished page\(s\), 2 record\(s\), taken as recorded/.test(line))).toBe(true);
    expect(counts.refused).toBe(0);
    expect(counts.answered).toBe(4);
    expect(Object.keys(await h.store(resumed.runId, 'out')).sort()).toEqual(['a1', 'a2', 'a3', 'b1', 'b2', 'b3']);
  });
});
