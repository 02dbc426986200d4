/**
 * A list answer that went past a schema arm to a catch-all (`GitHubPR -> { store … }` then
 * `_ -> skip`, as upstream's github-sync writes it) dropped every record without a word: a schema
 * arm matches one record. The run says so, naming the arm that takes a list.
 */
import { afterEach, expect, it } from 'vitest';
import { openConformance, type Conformance } from '../conformance/harness.js';

let c: Conformance | undefined;
afterEach(async () => {
  await c?.close();
  c = undefined;
});

it('says when a list answer went past a schema arm to a catch-all (the schema matches one record; [Schema] a list)', async () => {
  c = await openConformance();
  c.api.on('GET /pulls', { body: [{ number: 1, title: 'a' }, { number: 2, title: 'b' }] });
  const mission = (arms: string) => `mission Pulls {
  source Api { auth: none, base: "http://127.0.0.1:9" }
  store prs: memory("prs")
  schema PR { number: number, title: string }
  action A {
    get "/pulls"
    match response {
${arms}
    }
  }
  run A
}
`;
  const said: string[] = [];
  const dropped = await c.start(c.mission('pulls', mission('      PR -> { store response -> prs { key: .number } },\n      _ -> skip')), {}, { progress: (line) => said.push(line) });
  expect(dropped.status).toBe('completed');
  expect(said.filter((l) => l.startsWith('warning'))).toEqual([
    'warning: A/1: the answer is a list of 2, which no schema arm takes: `PR ->` matches a single record; `[PR] ->` matches a list of them',
  ]);
  const listed: string[] = [];
  await c.start(c.mission('pulls-list', mission('      PR -> skip,\n      [PR] -> { for p in response { store p -> prs { key: .number } } },\n      _ -> skip')), {}, { progress: (line) => listed.push(line) });
  expect(listed.filter((l) => l.startsWith('warning'))).toEqual([]);
});
