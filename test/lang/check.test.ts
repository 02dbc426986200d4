import { describe, expect, it } from 'vitest';
import type { Diagnostic } from '../../engine/lang/diagnostics.js';
import { checkMission } from '../../engine/lang/check.js';
import { checkSource } from '../../engine/lang/loader.js';
import { LineIndex } from '../../engine/lang/line-index.js';
import { parseProgram } from '../../engine/lang/parser.js';
import { loopAssignments } from '../../engine/lang/check-bindings.js';
import type { MissionDecl } from '../../engine/lang/ast.js';

/** A mission with one source, two stores, a schema, a transform and an action `Load`. */
function mission(steps: string, decls = '', run = 'run Load'): string {
  return `mission M {
  source Api { auth: none, base: "https://api.test" }
  store items: memory("items")
  store audit: memory("audit")
  schema Good { id: number }
  transform ToTag { (Good) -> Tag { text: "x" } }
${decls}
  action Load {
${steps}
  }
${run}
}
`;
}

interface Seen {
  code: string;
  severity: string;
  at: string;
  line: number;
  column: number;
  text: string;
  message: string;
  help?: string;
}

function check(src: string): Seen[] {
  const index = new LineIndex(src);
  return checkSource(src, 'm.vague').map((d: Diagnostic) => ({
    code: d.code,
    severity: d.severity,
    at: `${index.position(d.span.start).line}:${index.position(d.span.start).column}`,
    line: index.position(d.span.start).line,
    column: index.position(d.span.start).column,
    text: src.slice(d.span.start, d.span.end),
    message: d.message,
    help: d.help,
  }));
}

/** Exactly one diagnostic, with this code, over this text. */
function one(src: string, code: string, text: string): Seen {
  const ds = check(src);
  expect(ds.map((d) => `${d.code} ${d.text}`)).toEqual([`${code} ${text}`]);
  return ds[0]!;
}

describe('clean missions', () => {
  it('a mission using every kind of declaration checks clean', () => {
    const src = mission(
      `    get "/x" { retry: { maxAttempts: 2, initialDelay: 0 }, allow: [404] }
    match response {
      404 -> skip,
      Good where .id > 3 -> continue,
      [Good] -> continue,
      _ -> continue
    }
    apply ToTag to response as tag
    for i in response concurrency 2 onError queue audit { store i -> items }
    store { id: 1, n: length(response) } -> audit
    store { ...response } -> audit
    store { n: 1 } -> audit { key: .n }
    wait { path: "/hook", expectedEvents: 1, storage: { target: audit } }
    pause { duration: "1h", persist: audit, resumeOn: webhook "/resume" | timeout }
    let e = env("HOME")`,
      '  schedule: cron "*/5 * * * *" { timezone: "Europe/London" }',
    );
    expect(check(src)).toEqual([]);
  });
});

describe('mission shape', () => {
  it('a file with no mission', () => {
    const d = one('source A { auth: none, base: "https://x.test" }\n', 'E3001', '');
    expect(d.at).toBe('1:1');
    expect(d.message).toBe('No mission found in m.vague');
  });

  it('a second mission is an error at its name', () => {
    const d = one(`${mission('    get "/x"')}mission Other { }\n`, 'E3002', 'Other');
    expect(d.message).toBe('Only the first mission runs: `Other` is ignored');
    expect(d.help).toContain('`M` at line 1');
  });

  it('a mission without run', () => {
    const d = one(mission('    get "/x"', '', ''), 'E3003', 'M');
    expect(d.help).toBe('add a line such as `run Load`');
  });

  it('several run lines and schedules are warnings at the earlier ones', () => {
    const ds = check(
      mission('    get "/x"', '  schedule: every 1 hours\n  schedule: every 2 hours', 'run Load\n  run Load'),
    );
    expect(ds.map((d) => [d.code, d.severity, d.text, d.line])).toEqual([
      ['E3005', 'warning', 'schedule', 7],
      ['E3004', 'warning', 'run', 12],
    ]);
  });

  it('top-level declarations beside a mission are ignored, with a warning', () => {
    const d = one(`store extra: memory("e")\n${mission('    get "/x"')}`, 'E3032', 'extra');
    expect(d.severity).toBe('warning');
    expect(d.help).toBe('move it into mission `M`');
  });
});

describe('duplicates', () => {
  // Upstream accepts a second store or source (issue 15): a warning, the first one is used.
  it.each([
    ['store', '  store items: memory("again")', 'items'],
    ['source', '  source Api { auth: none, base: "https://b.test" }', 'Api'],
  ])('a second %s is warning E3035', (kind, decl, name) => {
    const d = one(mission('    get "/x"', decl), 'E3035', name);
    expect(d.severity).toBe('warning');
    expect(d.message).toMatch(new RegExp(`^Duplicate ${kind} \`${name}\`: this declaration is ignored, the one at line \\d+ is used$`));
  });

  it.each([
    ['schema', '  schema Good { x: string }', 'Good'],
    ['transform', '  transform ToTag -> Tag { a: 1 }', 'ToTag'],
    ['action', '  action Load { get "/again" }', 'Load'],
  ])('a second %s', (kind, decl, name) => {
    const d = one(mission('    get "/x"', decl), 'E3006', name);
    expect(d.message).toBe(`Duplicate ${kind} \`${name}\``);
    expect(d.help).toMatch(/is already declared at line \d+; rename or remove one of them/);
  });
});

describe('unknown names', () => {
  it('store step target, with did-you-mean', () => {
    const d = one(mission('    store response -> itmes'), 'E3007', 'itmes');
    expect(d.message).toBe('Unknown store `itmes`');
    expect(d.help).toBe('did you mean `items`?');
  });

  it('queue directive, for onError queue, wait storage and pause persist', () => {
    const ds = check(
      mission(`    match response { _ -> queue dlq }
    for i in response onError queue dlq2 { get "/y" }
    wait { path: "/h", storage: { target: hooks } }
    pause { persist: pauses }`),
    );
    expect(ds.map((d) => `${d.code} ${d.text}`)).toEqual(['E3007 dlq', 'E3007 dlq2', 'E3007 hooks', 'E3007 pauses']);
    expect(ds[0]!.help).toBe('declared stores: `items`, `audit`');
  });

  it('source option and call source', () => {
    const ds = check(mission('    get "/x" { source: Apo }\n    call Spce.list'));
    expect(ds.map((d) => [d.code, d.text, d.help])).toEqual([
      ['E3008', 'Apo', 'did you mean `Api`?'],
      ['E3008', 'Spce', 'declared sources: `Api`'],
    ]);
  });

  it('call on a source declared without `from`', () => {
    const d = one(mission('    call Api.listPets'), 'E3009', 'Api');
    expect(d.message).toBe('`call Api.listPets` needs an OpenAPI spec, but source `Api` has none');
  });

  it('pipeline stage and jump target', () => {
    // A single file's pipeline: upstream checks its names only in folder missions (loader.test.ts).
    const d = one(mission('    get "/x"', '', 'run Laod'), 'E3036', 'Laod');
    expect(d.severity).toBe('warning');
    expect(d.message).toBe('Unknown action `Laod`: running the mission fails at this stage');
    expect(d.help).toBe('did you mean `Load`?');
    const j = one(mission('    match response { _ -> jump Lod }'), 'E3010', 'Lod');
    expect(j.message).toBe('Unknown action `Lod`');
  });

  it('jump to an action only in parallel stages, or in no stage', () => {
    const decls = '  action A { get "/a" }\n  action B { get "/b" }\n  action C { get "/c" }';
    const ds = check(mission('    match response { Good -> jump A, _ where .y -> jump C, _ -> jump Load }', decls, 'run Load then [A, B]'));
    expect(ds.map((d) => `${d.code} ${d.text}`)).toEqual(['E3011 A', 'E3012 C']);
  });

  it('apply with an unknown transform', () => {
    expect(one(mission('    apply ToTga to response'), 'E3013', 'ToTga').help).toBe('did you mean `ToTag`?');
  });

  it('schema arms and transform variant schemas', () => {
    const ds = check(
      mission('    match response { Goodd -> continue, [Godo] -> continue, _ -> skip }', '  transform T2 { (Bad) -> X { a: 1 } }'),
    );
    expect(ds.map((d) => `${d.code} ${d.text} ${d.help}`)).toEqual([
      'E3014 Bad declared schemas: `Good`',
      'E3014 Goodd did you mean `Good`?',
      'E3014 Godo did you mean `Good`?',
    ]);
  });
});

describe('sources', () => {
  it('no auth, no base nor from, a base that is not http(s)', () => {
    const src = `mission M {
  source A { base: "https://a.test" }
  source B { auth: none }
  source C { auth: none, base: "ftp://c.test" }
  action Load { get "/x" }
  run Load
}`;
    expect(check(src).map((d) => `${d.code} ${d.text}`)).toEqual(['E3015 A', 'E3016 B', 'E3017 "ftp://c.test"']);
  });

  it('a fetch with no source at all', () => {
    const d = one('mission M {\n  action Load { get "/x" }\n  run Load\n}', 'E3033', 'get');
    expect(d.severity).toBe('warning');
    expect(d.message).toBe('This request has no source: the mission declares none, so running it fails');
  });
});

describe('functions', () => {
  it('unknown function with suggestion', () => {
    const d = one(mission('    let n = lenght(response)'), 'E3018', 'lenght');
    expect(d.help).toBe('did you mean `length`?');
  });

  it('warns that `else =>` in a match expression is no catch-all', () => {
    for (const word of ['else', 'default', 'otherwise']) {
      const d = one(mission(`    let t = match response.plan { "pro" => "paid", ${word} => "free" }`), 'E3051', word);
      expect(d.severity).toBe('warning');
      expect(d.help).toBe('write `_ => …` for the arm that matches everything');
      expect(d.message).toContain('compared with the subject');
    }
    // Without a subject each arm is a condition: said so, not "the subject" (probe 110 K11).
    const guards = one(mission(`    let t = match { response.total > 10 => "big", else => "small" }`), 'E3051', 'else');
    expect(guards.message).toBe('`else` here is no catch-all: each arm of `match { … }` is a condition, and this one is the variable `else` (undefined when none is bound), so the arm is never chosen and the match gives no value when no other holds');
  });

  it('a random id function points to generateId, which replays', () => {
    for (const name of ['uuid', 'uuidv4', 'randomUUID']) {
      expect(one(mission(`    let id = ${name}()`), 'E3018', name).help).toMatch(/^use `generateId\(\)`: an id derived from the run and the step/);
    }
  });

  it('a function (`x => …`) only where a built-in takes one, with the parameters it passes (E3056)', () => {
    expect(check(mission('    let a = map(response, x => x.id)\n    let b = reduce(response, (t, x) => t + x.n, 0)\n    let c = sortBy(response, .name)'))).toEqual([]);
    const notTaken = one(mission('    let n = length(x => x)'), 'E3056', 'x => x');
    expect(notTaken.message).toBe('A function (`x => …`) is no argument of `length` here');
    expect(one(mission('    let n = map(x => x, response)'), 'E3056', 'x => x').message).toBe('A function (`x => …`) is no argument of `map` here');
    const params = one(mission('    let n = reduce(response, x => x.n, 0)'), 'E3056', 'x => x.n');
    expect([params.message, params.help]).toEqual(['`reduce` calls its function with two values (the running value and the item), but this one takes 1', 'write `(total, x) => total + x`']);
    expect(one(mission('    let n = filter(response, (a, b) => a)'), 'E3056', '(a, b) => a').message).toBe('`filter` calls its function with one value (the item), but this one takes 2');
    expect(one(mission('    let n = reduce(response, .n, 0)'), 'E3056', '.n').message).toBe('`reduce` needs a function of the running value and the item');
    expect(one(mission('    let n = map([1], response => response.id)'), 'E3056', 'response').message).toMatch(/^A parameter cannot be named `response`/);
    expect(one(mission('    let n = reduce([1], (x, x) => x, 0)'), 'E3056', 'x').message).toBe('Parameter `x` is given twice');
  });

  it('a method call names the built-in to call instead', () => {
    const d = one(mission('    let ids = response.items.map(.id)'), 'E3019', 'response.items.map');
    expect(d.help).toBe('call the built-in with the list first: `map(response.items, .field)` or `map(response.items, e => e.field)`');
  });

  it('wrong arity', () => {
    expect(one(mission('    let n = length(1, 2)'), 'E3020', 'length(1, 2)').message).toBe('`length` expected 1 argument but got: 2');
    expect(one(mission('    let n = now(1)'), 'E3020', 'now(1)').message).toBe('`now` expected 0 arguments but got: 1');
    expect(one(mission('    let n = range()'), 'E3020', 'range()').message).toBe('`range` expected 1 to 2 arguments but got: 0');
  });

  it('env with a dynamic name', () => {
    const d = one(mission('    let k = "HOME"\n    let v = env(k)'), 'E3021', 'k');
    expect(d.message).toBe('`env` expected a string literal but got: an expression');
  });

  it('checks calls nested anywhere: bodies, guards, stage conditions, transforms', () => {
    const ds = check(
      mission(
        '    post "/x" { body: { a: [fooo(1)] } }\n    match response { _ where barr(1) -> continue }',
        '  transform T3 -> X { a: bazz(1) }',
        'run Load if quxx(1)',
      ),
    );
    expect(ds.map((d) => d.text).sort()).toEqual(['barr', 'bazz', 'fooo', 'quxx']);
  });
});

describe('stable store keys', () => {
  it('an object literal without id or spread and no key option is an error', () => {
    const d = one(mission('    store { name: "x" } -> items'), 'E3022', '{ name: "x" }');
    expect(d.message).toBe('Cannot compute a stable key for records stored in `items`: the object has no `id`');
  });

  it('an id, a spread, a key option or a non-literal source is fine', () => {
    const src = mission(
      '    store { id: 1 } -> items\n    store { ...response } -> items\n    store { a: 1 } -> items { key: .a }\n    store response -> items',
    );
    expect(check(src)).toEqual([]);
  });
});

describe('value ranges', () => {
  it.each([
    ['retry maxAttempts', '    get "/x" { retry: { maxAttempts: 0 } }', '0', '`maxAttempts` expected a number ≥ 1 but got: 0'],
    ['match retry', '    match response { _ -> retry { maxAttempts: 0 } }', '0', '`maxAttempts` expected a number ≥ 1 but got: 0'],
    ['wait expectedEvents', '    wait { path: "/h", expectedEvents: 0 }', '0', '`expectedEvents` expected a number ≥ 1 but got: 0'],
    ['fetch maxPages', '    get "/x" { maxPages: 0 }', '0', '`maxPages` expected a number ≥ 1 but got: 0'],
    // Past 2^31 − 1 ms a Node timer fires at once: every request timed out after 1 ms (helper 42).
    ['fetch timeout beyond a timer', '    get "/x" { timeout: 3000000000 }', '3000000000', '`timeout` expected milliseconds from 1 to 2147483647 (about 24.8 days, the longest a timer waits) but got: 3000000000'],
    ['retry timeout of 0', '    get "/x" { retry: { timeout: 0 } }', '0', '`timeout` expected milliseconds from 1 to 2147483647 (about 24.8 days, the longest a timer waits) but got: 0'],
  ])('%s', (_label, steps, text, message) => {
    expect(one(mission(steps), 'E3023', text).message).toBe(message);
  });

  it('declaration numbers: rate limit, circuit breaker, batch size, schedule options', () => {
    const src = `mission M {
  source Api { auth: none, base: "https://a.test", rateLimit: { fallbackRpm: 0 }, circuitBreaker: { failureThreshold: 0 } }
  store items: memory("items") { batch: { size: 0 } }
  schedule: every 1 hours { maxConcurrency: 0 }
  source Big { auth: none, base: "https://b.test", timeout: 0, maxResponseBytes: 5000000000 }
  action Load { get "/x" }
  run Load
}`;
    expect(check(src).map((d) => `${d.code} ${d.at} ${d.message}`)).toEqual([
      'E3023 2:78 `fallbackRpm` expected a number > 0 but got: 0',
      'E3023 2:119 `failureThreshold` expected a number > 0 but got: 0',
      'E3023 3:49 `size` expected a number ≥ 1 but got: 0',
      'E3023 4:45 `maxConcurrency` expected a number ≥ 1 but got: 0',
      'E3023 5:61 `timeout` expected milliseconds from 1 to 2147483647 (about 24.8 days, the longest a timer waits) but got: 0',
      // Past 4 GiB zlib refused every compressed answer; past 512 MiB no text holds the body anyway.
      'E3023 5:82 `maxResponseBytes` expected bytes from 1 to 536870912 (512 MiB, about the longest text a run can hold) but got: 5000000000',
    ]);
  });

  it('statuses outside 100–599 in allow and in arms; duplicate status arms', () => {
    const ds = check(mission('    get "/x" { allow: [404, 42, 500] }\n    match response { 700 -> skip, 404 -> skip, 404 -> continue, 500 where .a -> skip, 500 -> skip }'));
    expect(ds.map((d) => `${d.code} ${d.text}`)).toEqual(['E3024 42', 'E3024 700', 'E3025 404']);
    expect(ds[2]!.help).toMatch(/^the arm at line 10 always takes 404/);
  });

  it('cron, at and time zone', () => {
    const cron = one(mission('    get "/x"', '  schedule: cron "*/0 * * * *"'), 'E3026', '"*/0 * * * *"');
    expect(cron.help).toContain('illegal stepping');
    expect(one(mission('    get "/x"', '  schedule: at "2025-02-30T09:00:00Z"'), 'E3027', '"2025-02-30T09:00:00Z"').message).toBe(
      'Expected a date-time but got: "2025-02-30T09:00:00Z"',
    );
    expect(check(mission('    get "/x"', '  schedule: at "2999-03-01T09:00:00+01:00"'))).toEqual([]);
    expect(one(mission('    get "/x"', '  schedule: every 1 days { timezone: "Mars/Olympus" }'), 'E3028', '"Mars/Olympus"').message).toBe(
      'Unknown time zone "Mars/Olympus"',
    );
  });

  it('webhook paths must start with "/"', () => {
    const ds = check(mission('    wait { path: "hook" }\n    pause { resumeOn: webhook "resume" }'));
    expect(ds.map((d) => `${d.code} ${d.text} ${d.help}`)).toEqual(['E3029 "hook" write "/hook"', 'E3029 "resume" write "/resume"']);
  });
});

describe('unreachable arms', () => {
  it('arms after a bare `_` in a match step: one warning at the first dead arm', () => {
    const d = one(mission('    match response { _ -> continue, Good -> skip, 404 -> skip }'), 'E3030', 'Good -> skip');
    expect(d.severity).toBe('warning');
  });

  it('a guarded `_` does not hide later arms; a match expression is checked too', () => {
    expect(check(mission('    match response { _ where .a -> continue, _ -> skip }'))).toEqual([]);
    expect(one(mission('    let t = match 1 { _ => "a", 2 => "b" }'), 'E3030', '2 => "b"').message).toBe(
      'This arm can never be chosen: the `_` arm before it matches everything',
    );
  });
});

describe('robustness', () => {
  it('checks every truncation of a mission without throwing', () => {
    const src = mission(
      `    get "/x" { retry: { maxAttempts: 2 }, allow: [404] }
    match response { 404 -> skip, Good -> { store response -> items }, _ -> jump Load }
    for i in response where .a > 1 concurrency 2 { store { id: i.id } -> items }
    wait { path: "/h", storage: { target: audit, key: .id } }`,
      '  schedule: cron "0 * * * *" { timezone: "UTC" }',
    );
    for (let cut = 0; cut <= src.length; cut += 3) {
      const text = src.slice(0, cut);
      const { program } = parseProgram(text, 't.vague');
      const unit = { root: program, mission: program.items.find((i) => i.kind === 'Mission') as never, files: [{ path: 't.vague', text }], dir: '.' };
      expect(() => checkMission(unit)).not.toThrow();
    }
  });
});

describe('variables in their scopes (E3040, E3041)', () => {
  it('E3040: a let in a concurrent loop body naming an outer variable binds a new one per iteration, and says so', () => {
    const src = mission(`    let count = 0
    for x in response.items concurrency 4 {
      let count = count + 1
    }`);
    const d = one(src, 'E3040', 'count');
    expect(d.severity).toBe('warning');
    expect(d.line).toBe(11);
    expect(d.message).toBe('`let count` inside this concurrent loop binds a new variable for each iteration; the outer `count` (line 9) keeps its value');
    expect(d.help).toContain('Drop `concurrency`');
    expect(d.help).toContain('length(xs where');
  });

  it('E3040 through a sequential loop or a match arm block inside a concurrent loop; a variable of the concurrent iteration itself is set without a warning', () => {
    const src = mission(`    let total = 0
    for x in response.items concurrency 2 {
      let sub = 0
      for y in x.lines {
        let sub = sub + y
        let total = total + y
      }
      match x {
        Good -> { let total = total + x.id }
        _ -> skip
      }
    }`);
    const ds = check(src).filter((d) => d.code === 'E3040');
    expect(ds.map((d) => `${d.line} ${d.text}`)).toEqual(['14 total', '17 total']);
    expect(ds[0]!.message).toContain('the outer `total` (line 9)');
  });

  it('a let in a sequential loop naming an outer variable sets it: no E3040; loopAssignments names those lets, and only those', () => {
    const src = mission(`    let count = 0
    let count = count + 1
    for x in response.items {
      let count = count + 1
      let label = x.id
      let label = label + 1
      for y in x.lines { let x = y }
      match x {
        Good -> { let found = x.id }
        _ -> continue
      }
      let found = 1
    }
    for x in response.items concurrency 2 { let count = 0 }
    for x in response.items { let n = x.id }
    for y in response.items concurrency 3 { let n = y.id }`);
    // Only the concurrent loop's count is warned about; n is new to each loop.
    expect(check(src).filter((d) => d.code === 'E3040').map((d) => `${d.line} ${d.text}`)).toEqual(['22 count']);
    const { program } = parseProgram(src, 't.vague');
    const action = (program.items.find((i) => i.kind === 'Mission') as MissionDecl).actions[0]!;
    // By line: the loop's count (12) and the inner loop's x (15); not the rebinding of label (14),
    // nor found (20), which the arm block bound in this same iteration, nor the concurrent loop's count.
    const lines = [...loopAssignments(action)].map((l) => `${src.slice(0, l.start).split('\n').length} ${src.slice(l.start, l.end)}`);
    expect(lines).toEqual(['12 let count = count + 1', '15 let x = y']);
  });

  it('E3041: a path placeholder no variable binds names the variable and how to bind it', () => {
    const src = mission('    get "/repos/{OWNER}/{repo.name}/issues"');
    const ds = check(src);
    expect(ds.map((d) => `${d.code} ${d.severity} ${d.text}`)).toEqual(['E3041 warning {OWNER}', 'E3041 warning {repo.name}']);
    expect(ds[0]!.message).toBe(
      "No variable `OWNER` is bound before this request, so its path placeholder {OWNER} is read from the run's setting `OWNER` (`reqon run … --env OWNER=…`): without one, running fails here (R4010)",
    );
    expect(ds[0]!.help).toContain('`--env OWNER=…`');
    expect(ds[1]!.message).toBe('No variable `repo` is bound before this request, so its path placeholder {repo.name} cannot be filled: running fails here (R4010)');
  });

  it('no E3041 when a let, a loop variable, an apply … as, a match binding or a wait binds the head first', () => {
    const src = mission(`    let owner = env("OWNER")
    get "/a/{owner}"
    for item in response.items { get "/b/{item.id}" }
    apply ToTag to response as tag
    get "/c/{tag.text}"
    match response { { error: { code: c } } -> skip, _ -> continue }
    get "/d/{c}"
    wait { path: "/hook", timeout: 1000 }
    get "/e/{webhook.id}"`);
    expect(check(src).filter((d) => d.code === 'E3041')).toEqual([]);
  });

  it('E3041 when the binding comes later, or only inside an earlier loop, or in another action', () => {
    const src = mission(
      `    get "/a/{later}"
    let later = 1
    for item in response.items { let inner = item.id }
    get "/b/{inner}"
    get "/c/{other}"`,
      `  action Other { let other = 1 }`,
      'run Load then Other',
    );
    expect(check(src).filter((d) => d.code === 'E3041').map((d) => d.text)).toEqual(['{later}', '{inner}', '{other}']);
  });
});
