/**
 * Which loops a resume may skip finished iterations of (MissionModel.iterationsSkippable): those
 * whose body, nested bodies included, leaves nothing behind but events and store writes.
 */
import { describe, expect, it } from 'vitest';
import { modelFor } from '../../engine/executor/run-mission.js';
import type { ForStep } from '../../engine/lang/ast.js';

/** Whether the first step of action A — a loop around `body` — may skip finished iterations. */
function skippable(body: string): boolean {
  const entry = '/virtual/skippable.vague';
  const text = `mission M {
  source Api { auth: none, base: "http://127.0.0.1:1" }
  store s: sql("t")
  store m: memory("m")
  action A {
    for item in range(0, 3) {
${body}
    }
  }
  action B { let x = 1 }
  run A
}
`;
  const model = modelFor({ entry, files: [{ path: entry, text }] });
  const loop = model.actions.get('A')!.steps[0] as ForStep;
  expect(loop.kind).toBe('For');
  return model.iterationsSkippable(loop);
}

describe('MissionModel.iterationsSkippable', () => {
  it('takes bodies of pure steps and stores, nested ones included', () => {
    expect(skippable('let x = item * 2\n store { id: item, x: x } -> s { key: .id }')).toBe(true);
    expect(skippable('for j in range(0, 2) { store { id: j } -> m { key: .id } }')).toBe(true);
    expect(skippable('validate item { assume item >= 0 } or { store { id: item } -> m { key: .id } }')).toBe(true);
  });

  it('refuses any request in the body: its replayed attempts must reach the source\'s circuit breaker', () => {
    expect(skippable('post "/p" { body: { n: item } }\n store { id: item } -> m { key: .id }')).toBe(false);
    expect(skippable('get "/g"\n match response { 404 -> skip, _ -> { store response -> m } }')).toBe(false);
    expect(skippable('for j in range(0, 2) { get "/g" }')).toBe(false);
  });

  it('refuses a fetch with `since` anywhere in the body (it leaves the action a pending checkpoint)', () => {
    expect(skippable('get "/changes" { since: lastSync }')).toBe(false);
    expect(skippable('for j in range(0, 2) { get "/changes" { since: lastSync } }')).toBe(false);
    expect(skippable('validate item { assume item >= 0 } or { get "/c" { since: lastSync } }')).toBe(false);
    expect(skippable('get "/g"\n match response { 404 -> skip, _ -> { get "/c" { since: lastSync } } }')).toBe(false);
  });

  it('refuses a store into the undeclared sync_state (it leaves the action a pending checkpoint)', () => {
    expect(skippable('store { "at": "2024-01-01T00:00:00Z" } -> sync_state { key: "k" + item }')).toBe(false);
    expect(skippable('for j in range(0, 2) { store { "at": 1 } -> sync_state { key: "k" } }')).toBe(false);
  });

  it('refuses pause and wait', () => {
    expect(skippable('pause { resumeOn: webhook "/go" }')).toBe(false);
    expect(skippable('wait { path: "/hook", expectedEvents: 1 }')).toBe(false);
  });
});
