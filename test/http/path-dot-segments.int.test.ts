/**
 * A request path made from data (`"/users/" + id`, `concat(…)`) that holds a `.` or `..` segment
 * (or `%2e%2e`, which URLs resolve alike) is refused before anything is sent: the URL resolved it
 * out of the source's base path, so a record whose id was `../../admin` turned
 * `DELETE /v1/users/…` into `DELETE /admin`. `{placeholder}`s already refused such values. From
 * log format 10 so is a part that is null, absent or empty (`"/users/" + null` is the collection).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openConformance, type Conformance } from '../conformance/harness.js';

let c: Conformance;

beforeEach(async () => {
  c = await openConformance();
});

afterEach(async () => {
  await c.close();
});

const mission = (id: string, how: 'plus' | 'concat') =>
  c.mission('Dots', `mission Dots {
  source Api { auth: none, base: "http://unused/v1" }
  action Remove {
    let id = ${JSON.stringify(id)}
    delete ${how === 'plus' ? '"/users/" + id' : 'concat("/users/", id, "/sessions")'}
  }
  run Remove
}
`);

describe('a request path made from data', () => {
  it('with a dot segment fails the step, R4010, and sends nothing', async () => {
    c.api.on('DELETE /admin', { status: 204 }).on('DELETE /v1/', { status: 204 });
    // `\` is a `/` to an http(s) URL, and tabs and newlines are dropped from it (WHATWG URL).
    for (const [id, how] of [['../../admin', 'plus'], ['..', 'plus'], ['.', 'concat'], ['%2E%2e', 'plus'], ['a/../../admin', 'concat'], ['..\\..\\admin', 'plus'], ['.\t.\\.\n.\\admin', 'plus']] as const) {
      const result = await c.start(mission(id, how), { sources: { Api: `${c.api.url}/v1` } });
      expect(result.status, id).toBe('failed');
      if (result.status !== 'failed') continue;
      expect(result.error.code, id).toBe('R4010');
      expect(result.error.message).toMatch(/segment, which the URL resolves to another path/);
    }
    expect(c.api.requests).toEqual([]);
  });

  it('without one is sent as written (dots inside a segment are data)', async () => {
    c.api.on('DELETE /v1/users/a..b', { status: 204 }).on('DELETE /v1/users/.env/sessions', { status: 204 });
    for (const [id, how] of [['a..b', 'plus'], ['.env', 'concat']] as const) {
      const result = await c.start(mission(id, how), { sources: { Api: `${c.api.url}/v1` } });
      expect(result.status, id).toBe('completed');
    }
    expect(c.api.requests.map((r) => `${r.method} ${r.url}`)).toEqual(['DELETE /v1/users/a..b', 'DELETE /v1/users/.env/sessions']);
  });

  it('with a part that is null, absent or empty fails the step, R4010, and sends nothing: not DELETE of the collection (probe 110 K9)', async () => {
    c.api.on('DELETE /v1/users/', { status: 204 }).on('DELETE /v1/users//sessions', { status: 204 });
    const text = (value: string, how: 'plus' | 'concat') => `mission Holes {
  source Api { auth: none, base: "http://unused/v1" }
  action Remove {
    let u = ${value}
    delete ${how === 'plus' ? '"/users/" + u.id' : 'concat("/users/", u.id, "/sessions")'}
  }
  run Remove
}
`;
    for (const [value, how, what] of [['{ id: null }', 'plus', 'null'], ['{ name: "x" }', 'plus', 'absent'], ['{ id: "" }', 'concat', 'empty'], ['{ id: null }', 'concat', 'null']] as const) {
      const result = await c.start(c.mission('Holes', text(value, how)), { sources: { Api: `${c.api.url}/v1` } });
      expect(result.status, `${value} ${how}`).toBe('failed');
      if (result.status !== 'failed') continue;
      expect(result.error.code).toBe('R4010');
      expect(result.error.message).toContain(`was computed with a part that is ${what}`);
    }
    expect(c.api.requests).toEqual([]);
    // Every part there: sent as computed.
    c.api.on('DELETE /v1/users/7', { status: 204 });
    expect((await c.start(c.mission('Holes', text('{ id: 7 }', 'plus')), { sources: { Api: `${c.api.url}/v1` } })).status).toBe('completed');
    // An empty part that fills no whole segment (a query suffix left out) is data, and a call's part is not evaluated again.
    c.api.on('GET /v1/orders', { body: [] });
    const suffix = await c.start(
      c.mission('Suffix', `mission Suffix {
  source Api { auth: none, base: "http://unused/v1" }
  action A {
    let q = ""
    get "/orders" + q
  }
  run A
}
`),
      { sources: { Api: `${c.api.url}/v1` } },
    );
    expect(suffix.status, JSON.stringify(suffix)).toBe('completed');
  });
});
