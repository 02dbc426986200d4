/**
 * Which fetch/store pairs stream (engine/steps/streamed-sync.ts): only where no later step can
 * notice that `response` was never gathered into one list.
 */
import { describe, expect, it } from 'vitest';
import type { MissionDecl, StoreDecl } from '../../engine/lang/ast.js';
import { parseProgram } from '../../engine/lang/parser.js';
import { findStreamedSyncs } from '../../engine/steps/streamed-sync.js';

/** The lines of `body` as the steps of action A, with stores of every kind declared. */
function streamedIn(body: string, extra = ''): string[] {
  const text = `mission M {
  source Api { auth: none, base: "http://127.0.0.1:1" }
  store s: sql("t")
  store m: memory("m")
  store f: file("f")
  store p: postgrest("p")
  ${extra}
  action A {
${body}
  }
  run A
}
`;
  const { program, diagnostics } = parseProgram(text, 'm.vague');
  expect(diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
  const mission = program.items.find((i): i is MissionDecl => i.kind === 'Mission')!;
  const stores = new Map<string, StoreDecl>(mission.stores.map((s) => [s.name.name, s]));
  const pairs = findStreamedSyncs(mission.actions, stores);
  return [...pairs].map(([fetch, store]) => `${text.slice(fetch.start, fetch.start + 3)}→${store.store.name}`);
}

const GET = 'get "/r" { paginate: offset(o, 10) }';

describe('findStreamedSyncs', () => {
  it('streams a paginated fetch that the action ends by storing whole', () => {
    expect(streamedIn(`${GET}\n store response -> s { key: .id }`)).toEqual(['get→s']);
    expect(streamedIn(`${GET}\n store response -> m`)).toEqual(['get→m']);
    expect(streamedIn(`${GET}\n store response -> p { key: .id }`)).toEqual(['get→p']);
  });

  it('streams inside a loop body, whose frame ends with the iteration', () => {
    expect(streamedIn(`for x in [1, 2] {\n ${GET}\n store response -> s\n }`)).toEqual(['get→s']);
  });

  it('does not stream when anything could still see the gathered response', () => {
    // A step after the store (it could read `response`).
    expect(streamedIn(`${GET}\n store response -> s\n let n = 1`)).toEqual([]);
    // Not paginated: one page is all there is.
    expect(streamedIn(`get "/r"\n store response -> s`)).toEqual([]);
    // Not the whole response.
    expect(streamedIn(`${GET}\n store response.items -> s`)).toEqual([]);
    // The key reads response.
    expect(streamedIn(`${GET}\n store response -> s { key: response.id }`)).toEqual([]);
    // A file store rewrites its file per batch.
    expect(streamedIn(`${GET}\n store response -> f`)).toEqual([]);
    // updateFrom is computed over the whole response.
    expect(streamedIn(`get "/r" { paginate: offset(o, 10), since: lastSync { param: "since", updateFrom: "updatedAt" } }\n store response -> s`)).toEqual([]);
    // A match arm runs in the enclosing frame: the response outlives the arm.
    expect(streamedIn(`match 1 {\n 1 -> {\n ${GET}\n store response -> s\n },\n _ -> continue\n }`)).toEqual([]);
  });
});
