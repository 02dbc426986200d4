/**
 * A mission over an API that answers in another encoding than UTF-8: named in the Content-Type's
 * charset, its records hold the characters it sent (read as UTF-8, each accented letter was stored
 * as U+FFFD); not named, the run says how many byte sequences it could not read, where it said
 * nothing.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { openConformance, type Conformance } from '../conformance/harness.js';

const MISSION = `mission Names {
  source Api { auth: none, base: "http://127.0.0.1:9" }
  store out: memory("out")
  action A {
    get "/people"
    for p in response.items { store p -> out { key: .id } }
  }
  run A
}
`;
const latin1 = (text: string) => Buffer.from(text, 'latin1');

let c: Conformance | undefined;
afterEach(async () => {
  await c?.close();
  c = undefined;
});

describe('bodies in another encoding', () => {
  it('are read in the charset the Content-Type names', async () => {
    c = await openConformance();
    c.api.on('GET /people', { headers: { 'content-type': 'application/json; charset=ISO-8859-1' }, bytes: latin1('{"items":[{"id":"1","name":"Café Müller"}]}') });
    const progress: string[] = [];
    const result = await c.start(c.mission('names', MISSION), {}, { progress: (line) => progress.push(line) });
    expect(result.status).toBe('completed');
    expect(await c.store(result.runId, 'out')).toEqual({ 1: { id: '1', name: 'Café Müller' } });
    expect(progress.filter((l) => l.startsWith('warning'))).toEqual([]);
  });

  it('are said to have lost characters when no charset names them', async () => {
    c = await openConformance();
    c.api.on('GET /people', { headers: { 'content-type': 'application/json' }, bytes: latin1('{"items":[{"id":"1","name":"Café Müller"}]}') });
    const progress: string[] = [];
    const result = await c.start(c.mission('names', MISSION), {}, { progress: (line) => progress.push(line) });
    expect(result.status).toBe('completed');
    expect(await c.store(result.runId, 'out')).toEqual({ 1: { id: '1', name: 'Caf\uFFFD M\uFFFDller' } });
    expect(progress.filter((l) => l.startsWith('warning'))).toEqual([
      'warning: A/0: GET /people: 2 byte sequence(s) of the body are not valid UTF-8 (its Content-Type names no charset): each became U+FFFD (�) in place of the character the API sent; an API that answers in another encoding should name it in its Content-Type',
    ]);
  });

  it('are read as UTF-8 when a Content-Type names UTF-16 over a body with no zero byte, and say so', async () => {
    // Helper 62: an ASCII body labelled charset=utf-16 was read as UTF-16 and refused as garbled text.
    c = await openConformance();
    c.api.on('GET /people', { headers: { 'content-type': 'application/json; charset=utf-16' }, bytes: Buffer.from('{"items":[{"id":"1","name":"Zoë"}]}', 'utf8') });
    const progress: string[] = [];
    const result = await c.start(c.mission('names', MISSION), {}, { progress: (line) => progress.push(line) });
    expect(result.status).toBe('completed');
    expect(await c.store(result.runId, 'out')).toEqual({ 1: { id: '1', name: 'Zoë' } });
    expect(progress.filter((l) => l.startsWith('warning'))).toEqual([
      'warning: A/0: GET /people: its Content-Type says charset=utf-16, but the body has none of the zero bytes UTF-16 text of JSON is full of, and is valid UTF-8: it was read as UTF-8, as JSON is',
    ]);
    // True UTF-16 (little-endian, no byte order mark) under that label is still read as UTF-16.
    c.api.on('GET /people', { headers: { 'content-type': 'application/json; charset=utf-16le' }, bytes: Buffer.from('{"items":[{"id":"2","name":"Zoë"}]}', 'utf16le') });
    const second = await c.start(c.mission('names', MISSION));
    expect(second.status).toBe('completed');
    expect(await c.store(second.runId, 'out')).toEqual({ 2: { id: '2', name: 'Zoë' } });
  });

  it('are read as UTF-8 when the bytes are UTF-8 beyond ASCII, whatever charset is named, and say so', async () => {
    // Helper 42: a UTF-8 body labelled ISO-8859-1 was stored as "cafÃ©", without a word.
    c = await openConformance();
    c.api.on('GET /people', { headers: { 'content-type': 'application/json; charset=iso-8859-1' }, bytes: Buffer.from('{"items":[{"id":"1","name":"Zoë 東京"}]}', 'utf8') });
    const progress: string[] = [];
    const result = await c.start(c.mission('names', MISSION), {}, { progress: (line) => progress.push(line) });
    expect(result.status).toBe('completed');
    expect(await c.store(result.runId, 'out')).toEqual({ 1: { id: '1', name: 'Zoë 東京' } });
    expect(progress.filter((l) => l.startsWith('warning'))).toEqual([
      'warning: A/0: GET /people: its Content-Type says charset=iso-8859-1, but the body is valid UTF-8 with characters beyond ASCII, which windows-1252 would misread (é as Ã©): it was read as UTF-8, as JSON is',
    ]);
  });
});
