/**
 * `abort` inside a `for` body, and `onError abort` in a concurrent loop, against a FakeApi on
 * 127.0.0.1. docs/language.md: "`abort e` … The run fails (`aborted`)", whatever the loop's
 * `onError` says (it tolerated the abort as an iteration failure: the run completed and the
 * actions after it ran). A concurrent loop starts no iteration once its end is decided (one more
 * started after the failing iteration's `step.failed`), and replays as it ran.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { StoredEvent } from '../../engine/log/events.js';
import { openConformance, type Conformance } from '../conformance/harness.js';

let c: Conformance;

beforeEach(async () => {
  c = await openConformance();
});

afterEach(async () => {
  await c.close();
});

const failedWith = (result: Awaited<ReturnType<Conformance['start']>>) =>
  result.status === 'failed' ? `${result.error.code}: ${result.error.message}` : JSON.stringify(result);

/** Paths of the iterations that started after the first failed step inside the loop at `forPath`. */
function startedAfterFailure(events: readonly StoredEvent[], forPath: string): string[] {
  const failedAt = events.findIndex((e) => e.type === 'step.failed' && e.stepPath.startsWith(`${forPath}[`));
  expect(failedAt).toBeGreaterThan(0);
  return events.slice(failedAt).flatMap((e) => (e.type === 'loop.iteration' ? [e.stepPath] : []));
}

describe('abort in a loop body', () => {
  for (const onError of ['', 'onError continue', 'onError queue bad']) {
    it(`fails the run from a validate's or-block (${onError || 'default onError'})`, async () => {
      const files = c.mission(
        'abort',
        `mission AbortInLoop {
  store out: memory("out")
  store bad: memory("bad")
  action A {
    for i in range(3) ${onError} {
      validate i { assume i != 1 } or { abort concat("bad item ", i) }
      store { id: i } -> out { key: .id }
    }
  }
  action B { store { id: "B" } -> out { key: .id } }
  run A then B
}
`,
      );
      const result = await c.start(files);
      expect(failedWith(result)).toBe('aborted: bad item 1');
      expect(result.tolerated).toEqual([]);
      expect(await c.store(result.runId, 'out')).toEqual({ '0': { id: 0 } });
      expect(await c.store(result.runId, 'bad')).toEqual({});
      await c.expectVerified(result.runId);
    });
  }

  it('fails the run from a match arm, from a nested loop, and from a concurrent loop', async () => {
    const files = c.mission(
      'abort',
      `mission AbortArm {
  store out: memory("out")
  action A {
    for row in [[1, 2], [3, -4], [5]] {
      for n in row concurrency 2 onError continue {
        match n {
          _ where n < 0 -> abort "negative"
          _ -> continue
        }
        store { id: n } -> out { key: .id }
      }
    }
  }
  action B { store { id: "B" } -> out { key: .id } }
  run A then B
}
`,
    );
    const result = await c.start(files);
    expect(failedWith(result)).toBe('aborted: negative');
    expect(result.actionsRun).toEqual([]);
    const out = await c.store(result.runId, 'out');
    expect(out).not.toHaveProperty('5');
    expect(out).not.toHaveProperty('B');
    await c.expectVerified(result.runId);
  });

  it('still lets onError continue tolerate other failures', async () => {
    const files = c.mission(
      'tolerate',
      `mission Tolerate {
  store out: memory("out")
  action A {
    for i in range(3) {
      store { id: i, v: 10 / (i - 1) } -> out { key: .id }
    }
  }
  run A
}
`,
    );
    const result = await c.start(files);
    expect(result.status).toBe('completed');
    expect(result.tolerated.map((t) => t.code)).toEqual(['R4003']);
    expect(Object.keys(await c.store(result.runId, 'out'))).toEqual(['0', '2']);
  });
});

describe('for … concurrency N onError abort', () => {
  it('starts no iteration once the failure is decided, and verifies', async () => {
    const files = c.mission(
      'concurrent',
      `mission OnErrorAbort {
  store out: memory("out")
  action A {
    for i in range(40) concurrency 2 onError abort {
      store { id: i, v: 10 / (i - 2) } -> out { key: .id }
    }
  }
  run A
}
`,
    );
    const result = await c.start(files);
    expect(failedWith(result)).toBe('R4003: Division by zero');
    expect(startedAfterFailure(await c.events(result.runId), 'A/0')).toEqual([]);
    await c.expectVerified(result.runId);
  });

  it('replays the iterations the run started when answers come back in another order', async () => {
    // Live, item 0's answer is held until item 2 has been asked for and answered (and a margin
    // for the engine to take that answer in): item 1 ends, item 2 starts and aborts, and item 0
    // ends after the abort with nothing new started. Replayed, every answer comes at once.
    let secondAsked!: () => void;
    const itemTwoAnswered = new Promise<void>((resolve) => (secondAsked = resolve));
    for (let i = 0; i < 5; i++) {
      c.api.on(`GET /items/${i}`, async () => {
        if (i === 0) await itemTwoAnswered.then(() => new Promise((resolve) => setTimeout(resolve, 400)));
        if (i === 2) secondAsked();
        return { body: { id: i, ok: i !== 2 } };
      });
    }
    const files = c.mission(
      'answers',
      `mission Answers {
  source Api { auth: none, base: "https://api.test" }
  store out: memory("out")
  action A {
    for i in range(5) concurrency 2 onError abort {
      get "/items/{i}"
      match response {
        { ok: false } -> abort concat("item ", i, " refused")
        _ -> continue
      }
      store response -> out { key: .id }
    }
  }
  run A
}
`,
    );
    const result = await c.start(files);
    expect(failedWith(result)).toBe('aborted: item 2 refused');
    expect(c.api.lines()).toEqual(['GET /items/0', 'GET /items/1', 'GET /items/2']);
    expect(startedAfterFailure(await c.events(result.runId), 'A/0')).toEqual([]);
    expect(Object.keys(await c.store(result.runId, 'out')).sort()).toEqual(['0', '1']);
    await c.expectVerified(result.runId);
  });

  it('onError queue keeps one dead letter per failed iteration, equal items with no id included, also after a concurrent loop', async () => {
    // Helper 79: two equal order lines with no id failing were one dead letter (keyed by content)
    // where the run counted two failures.
    for (const concurrency of ['', 'concurrency 3']) {
      const files = c.mission(
        'dead-letters',
        `mission DeadLetters {
  store dlq: sql("dead_letters")
  action A {
    for line in [{ sku: "A-1", qty: 1 }, { sku: "B-2", qty: 2 }, { sku: "A-1", qty: 1 }, 7, 7, { id: "x", qty: 0 }, { id: "x", qty: 0 }] ${concurrency} onError queue dlq {
      validate line { assume line == 99 }
    }
  }
  run A
}
`,
      );
      const result = await c.start(files);
      expect(result.status).toBe('completed');
      expect(result.tolerated).toHaveLength(7);
      const letters = await c.store(result.runId, 'dlq');
      // Equal items with no id: one dead letter each; equal ids stay one record, as a store keeps them.
      expect(Object.values(letters)).toHaveLength(6);
      expect(Object.keys(letters).filter((k) => k.endsWith('~2'))).toHaveLength(2);
      await c.expectVerified(result.runId);
    }
  });

  it('a queue directive (validate … or, a match arm) keeps them apart too, as onError queue does (probe 110 K2)', async () => {
    for (const [name, body] of [
      ['validate', 'validate line { assume line.qty > 5 } or { queue dlq }'],
      ['match arm', 'match line { l where l.qty < 5 -> queue dlq, _ -> continue }'],
    ] as const) {
      const result = await c.start(
        c.mission(
          'queued',
          `mission Queued {
  store dlq: memory("dlq")
  action A {
    for line in [{ sku: "A-1", qty: 1 }, { sku: "A-1", qty: 1 }, { sku: "A-1", qty: 1 }, { sku: "B-2", qty: 9 }] {
      ${body}
    }
  }
  run A
}
`,
        ),
      );
      expect(result.status, name).toBe('completed');
      // Three equal lines queued: three dead letters (before: one, keyed by content).
      expect(Object.keys(await c.store(result.runId, 'dlq')).map((k) => k.replace(/^[0-9a-f]+/, 'K')), name).toEqual(['K', 'K~2', 'K~3']);
      await c.expectVerified(result.runId);
    }
  });
});
