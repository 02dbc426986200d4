/**
 * `jump A then continue` is a detour: A runs in place, then the walk carries on after the step
 * that jumped (docs/language.md). Before, the detour finished the whole action: the steps after
 * the `match` never ran. On every log backend (test/support/temp-log.ts).
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openConformance, type Conformance } from '../conformance/harness.js';
import { backends } from '../support/temp-log.js';

let h: Conformance;

async function run(name: string, text: string) {
  const entry = path.join(h.dir, `${name}.vague`);
  fs.writeFileSync(entry, text);
  const result = await h.start({ entry, files: [{ path: entry, text }] });
  expect(result.status, result.status === 'failed' ? result.error.message : '').toBe('completed');
  await h.expectVerified(result.runId);
  return result;
}

const posts = (): string[] => h.api.requests.filter((r) => r.method === 'POST').map((r) => `${r.url} ${JSON.stringify(r.body)}`);

describe.each(backends)('%s: jump A then continue', (backend) => {
  beforeEach(async () => {
    h = await openConformance({ backend });
    h.api.on('GET /status', { body: { ok: false } });
    h.api.on('GET /items', { body: [{ id: 1 }, { id: 2 }] });
    for (const p of ['/recover', '/after', '/item']) h.api.on(`POST ${p}`, { body: { ok: true } });
  });

  afterEach(async () => {
    await h.close();
  });

  it('runs the detour, then the steps after the match, then the rest of the pipeline', async () => {
    const result = await run(
      'detour',
      `mission Detour {
  source Api { auth: none, base: "http://127.0.0.1:1" }
  action Main {
    get "/status"
    match response {
      _ -> jump Recover then continue
    }
    post "/after" { body: { step: "after" } }
  }
  action Recover {
    post "/recover" { body: { step: "recover" } }
  }
  action Last {
    post "/after" { body: { step: "last" } }
  }
  run Main then Last
}
`,
    );
    expect(posts()).toEqual(['/recover {"step":"recover"}', '/after {"step":"after"}', '/after {"step":"last"}']);
    expect(result.actionsRun).toEqual(['Recover', 'Main', 'Last']);
  });

  it('inside a loop: the detour, then the rest of the iteration, then the next iterations', async () => {
    await run(
      'loop',
      `mission LoopDetour {
  source Api { auth: none, base: "http://127.0.0.1:1" }
  action Main {
    get "/items"
    let items = response
    for it in items {
      match it {
        _ -> jump Recover then continue
      }
      post "/item" { body: { id: it.id } }
    }
  }
  action Recover {
    post "/recover" { body: { step: "recover" } }
  }
  run Main
}
`,
    );
    expect(posts()).toEqual(['/recover {"step":"recover"}', '/item {"id":1}', '/recover {"step":"recover"}', '/item {"id":2}']);
  });
});
