/**
 * What a request carries from data must reach the server as written, or fail at once saying why:
 * a `#` in a path made from data is sent as `%23` (a URL's fragment never leaves the client, so
 * `"/search/" + "C#"` was sent as `/search/C`, its `params:` left in the fragment, while the log
 * recorded the whole URL); a header value HTTP cannot carry (beyond Latin-1, a control character)
 * fails the step before anything is sent, naming the header (it was retried three times as a
 * network failure, "invalid X-Tag header").
 */
import { afterEach, describe, expect, it } from 'vitest';
import { openConformance, type Conformance } from '../conformance/harness.js';

let c: Conformance | undefined;
afterEach(async () => {
  await c?.close();
  c = undefined;
});

describe('a # in a request path made from data', () => {
  it('is sent as %23, with the query after it, and the log records what was sent', async () => {
    c = await openConformance();
    c.api.on('GET /search/C%23?*', { body: { id: 'hit' } });
    const mission = c.mission('Hash', `mission Hash {
  source Api { auth: none, base: "http://127.0.0.1:9" }
  store s: memory("s")
  action A {
    let lang = "C#"
    get "/search/" + lang { params: { page_size: 50 } }
    store response -> s { key: .id }
  }
  run A
}
`);
    const result = await c.start(mission);
    expect(result.status).toBe('completed');
    expect(c.api.lines()).toEqual(['GET /search/C%23?page_size=50']);
    const sent = (await c.events(result.runId)).find((e) => e.type === 'http.request')!.payload as { request: { url: string } };
    expect(sent.request.url).toBe(`${c.api.url}/search/C%23?page_size=50`);
  });
});

describe('a header value HTTP cannot carry', () => {
  for (const [label, value, what] of [
    ['an emoji', '"release \u{1F680}"', 'header "X-Tag" has a character beyond Latin-1 ("\u{1F680}", U+1F680) at position 9 of its value, which HTTP headers cannot carry'],
    ['a NUL', '"a\\u0000"', 'header "X-Tag" has a control character (U+0000) at position 2'],
  ] as const) {
    it(`(${label}) fails the step at once, naming the header, and sends nothing`, async () => {
      c = await openConformance();
      c.api.on('POST /tags', { body: { ok: true } });
      const mission = c.mission('Hdr', `mission Hdr {
  source Api { auth: none, base: "http://127.0.0.1:9" }
  action A {
    post "/tags" { body: { n: 1 }, headers: { "X-Tag": ${value} } }
  }
  run A
}
`);
      const result = await c.start(mission);
      expect(result.status).toBe('failed');
      if (result.status !== 'failed') return;
      expect(result.error.message).toContain(what);
      expect(result.error.message).not.toMatch(/attempts/);
      expect(c.api.requests).toEqual([]);
    });
  }
});
