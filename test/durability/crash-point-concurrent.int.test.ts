/**
 * `--crash-at POINT:N` names one place in the run (ARCHITECTURE, "Crash points"), also inside a
 * concurrent loop: there the Nth pass used to be whichever branch got there Nth, so an API that
 * answered in another order (as real ones do from one run to the next) moved the kill to another
 * iteration's effect. Now the armed point's occurrences count in the mission's order. The API
 * here answers the loop's POSTs slowest-first in one run and fastest-first in the other; the same
 * POINT:N must kill at the same iteration in both, and the resumed run must end with every POST
 * applied once and every row stored. On each log backend, the built CLI.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StoredEvent } from '../../engine/log/events.js';
import { FakeApi } from '../support/fake-api.js';
import { backends, type Backend } from '../support/temp-log.js';
import { runArmedToEnd } from './support/armed-run.js';
import { builtCli } from './support/cli-build.js';

const ITEMS = 6;

const MISSION = `mission Turns {
  source Api { auth: none, base: "http://127.0.0.1:1" }
  store sent: sql("crash_turns_sent")
  action Send {
    for i in range(0, ${ITEMS}) concurrency 3 {
      post "/work" { body: { n: i } }
      store { id: i, echo: response.n } -> sent { key: .id }
    }
  }
  run Send
}
`;

/** A parallel stage: its actions are branches too. */
const STAGE = `mission Stage {
  source Api { auth: none, base: "http://127.0.0.1:1" }
  store sent: sql("crash_turns_sent")
  action First { post "/work" { body: { n: 0 } }  store { id: 0, echo: response.n } -> sent { key: .id } }
  action Second { post "/work" { body: { n: 1 } }  store { id: 1, echo: response.n } -> sent { key: .id } }
  run [First, Second]
}
`;

type Order = 'slowest-first' | 'fastest-first';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let cli: string;
let api: FakeApi;
let root: string;
let order: Order = 'slowest-first';

beforeAll(async () => {
  cli = builtCli();
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'reqon-crash-turns-'));
  api = await new FakeApi().start();
  api.on('POST /work', async (req) => {
    const n = (req.body as { n: number }).n;
    // Iteration 0 answers last in one order, first in the other.
    await sleep((order === 'slowest-first' ? ITEMS - n : n + 1) * 40);
    return { status: 201, body: { n } };
  });
});

afterAll(async () => {
  await api.stop();
  fs.rmSync(root, { recursive: true, force: true });
});

/** The POSTs the API received (their `n`), and the keys the log holds written, when the armed run died. */
async function killedAt(backend: Backend, crashAt: string, answers: Order, missionText = MISSION, items = ITEMS) {
  order = answers;
  api.requests.length = 0;
  api.applied.clear();
  let atKill: { posted: number[]; stored: string[] } | undefined;
  const facts = await runArmedToEnd({
    cli,
    backend,
    dir: path.join(root, `${backend}-${missionText === MISSION ? 'loop' : 'stage'}-${crashAt.replace(':', '-')}-${answers}`),
    missionText,
    apiUrl: api.url,
    crashAt,
    tables: ['crash_turns_sent'],
    atKill: (events) => {
      atKill = {
        posted: api.requests.filter((r) => r.method === 'POST').map((r) => (r.body as { n: number }).n).sort(),
        stored: events.filter((e): e is StoredEvent<'store.write'> => e.type === 'store.write').map((e) => e.payload.key).sort(),
      };
    },
  });
  // Resumed to the end: every POST applied once, every row stored.
  expect([...api.applied.values()]).toEqual(Array(items).fill(1));
  const rows = facts.tables['crash_turns_sent']!.map((r) => r.record as { id: number; echo: number });
  expect(rows.sort((a, b) => a.id - b.id)).toEqual(Array.from({ length: items }, (_, i) => ({ id: i, echo: i })));
  return atKill!;
}

describe.each(backends)('--crash-at inside a concurrent loop names one place (%s log)', (backend) => {
  // after-effect is passed by the POSTs (a sql store's batch has no after-effect): the third is
  // iteration 2's POST answered, once iterations 0 and 1 have ended — their rows stored.
  it('after-effect:3 dies after the third iteration\'s POST, whichever order the API answers in', async () => {
    for (const answers of ['slowest-first', 'fastest-first'] as const) {
      expect(await killedAt(backend, 'after-effect:3', answers), answers).toEqual({ posted: [0, 1, 2], stored: ['0', '1'] });
    }
  }, 120_000);

  // mid-store passes only at the stores: the second is iteration 1's. POSTs are not the armed
  // point's, so they stay concurrent: the three in flight at the kill may all have been sent.
  it('mid-store:2 dies in the second iteration\'s store, whichever order the API answers in', async () => {
    for (const answers of ['slowest-first', 'fastest-first'] as const) {
      const { stored } = await killedAt(backend, 'mid-store:2', answers);
      expect(stored, answers).toEqual(['0']);
    }
  }, 120_000);

  it('before-effect:3 in a parallel stage dies at the second action\'s POST, whichever answers first', async () => {
    for (const answers of ['slowest-first', 'fastest-first'] as const) {
      // before-effect: First's POST, First's store, then Second's POST — sent only once First ended.
      expect(await killedAt(backend, 'before-effect:3', answers, STAGE, 2), answers).toEqual({ posted: [0], stored: ['0'] });
    }
  }, 120_000);
});
