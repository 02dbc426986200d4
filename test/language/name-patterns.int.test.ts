/**
 * assets/language/name-patterns.vague against a FakeApi on 127.0.0.1: a match arm's name that is no
 * declared schema binds the value for its guard and body (`v where v is string`), `[]` takes an
 * empty list and `[only]` a list of exactly one item; `[Entry]` stays the schema-array test, so a
 * two-item list goes past `[only]` to it. Checked by what the stores hold, then verified; a
 * misspelt schema that its arm does not read stays E3014.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { checkSource } from '../../engine/lang/loader.js';
import { openConformance, REPO, type Conformance } from '../conformance/harness.js';

const ENTRY = path.join(REPO, 'assets/language/name-patterns.vague');
const TEXT = fs.readFileSync(ENTRY, 'utf8');

let c: Conformance;

beforeEach(async () => {
  c = await openConformance();
});

afterEach(async () => {
  await c.close();
});

describe('name and list patterns in match arms', () => {
  it('binds by name, tells an empty list, a one-item list and a list of entries apart', async () => {
    c.api
      // `v`, the answer's own field, must not stand in for a matched value that is null.
      .on('GET /values', { body: { v: 'FROM_RESPONSE', values: ['red', 7, 250, [1, 2, 3], true, null] } })
      .on('GET /batches/empty', { body: { entries: [] } })
      .on('GET /batches/one', { body: { entries: [{ id: 'e1', size: 1 }] } })
      .on('GET /batches/two', { body: { entries: [{ id: 'e2', size: 2 }, { id: 'e3', size: 3 }] } })
      .on('GET /batches/bad', { body: { entries: 'none today' } });
    const result = await c.start({ entry: ENTRY, files: [{ path: ENTRY, text: TEXT }] }, { sources: { Feed: c.api.url } });
    expect(result.status).toBe('failed');
    expect(result.status === 'failed' ? [result.error.code, result.error.message] : []).toEqual(['aborted', 'batch bad is no list of entries']);
    expect(await c.store(result.runId, 'kinds')).toEqual({
      's-red': { id: 's-red', kind: 'string' },
      'n-7': { id: 'n-7', kind: 'number' },
      'big-250': { id: 'big-250', kind: 'big number' },
      'a-3': { id: 'a-3', kind: 'array' },
      absent: { id: 'absent', kind: 'absent' },
    });
    expect(await c.store(result.runId, 'batches')).toEqual({
      empty: { id: 'empty', got: 'none' },
      one: { id: 'one', got: 'one', first: 'e1' },
      two: { id: 'two', got: 'entries', count: 2 },
    });
    await c.expectVerified(result.runId);
  });

  it('binds an absent value as absent: never the field of that name of the answer', async () => {
    c.api.on('GET /v', { body: { v: 'FROM_RESPONSE', items: [{ k: 1 }, { j: 2 }] } });
    const entry = path.join(c.dir, 'absent.vague');
    const text = [
      'mission Absent {',
      '  source Feed { auth: none, base: "http://127.0.0.1:1" }',
      '  store out: memory("out")',
      '  action A {',
      '    get "/v"',
      '    for it in response.items {',
      '      match it.k {',
      '        v where v == null -> store { id: "absent", got: v ?? "none" } -> out { key: .id },',
      '        v -> store { id: concat("k-", v), got: v } -> out { key: .id }',
      '      }',
      '    }',
      '  }',
      '  run A',
      '}',
      '',
    ].join('\n');
    const result = await c.start({ entry, files: [{ path: entry, text }] }, { sources: { Feed: c.api.url } });
    expect(result.status).toBe('completed');
    expect(await c.store(result.runId, 'out')).toEqual({ 'k-1': { id: 'k-1', got: 1 }, absent: { id: 'absent', got: 'none' } });
    await c.expectVerified(result.runId);
  });

  it("a schema's name as an arm of a match expression tests the schema, as a match step's does", async () => {
    // Helper 79: compared as a value, `Card` never matched a record and matched a null subject.
    const entry = path.join(c.dir, 'schema-arms.vague');
    const text = [
      'mission SchemaArms {',
      '  store s: memory("s")',
      '  schema Card { brand: string }',
      '  schema Bank { iban: string }',
      '  action A {',
      '    for o in [{ id: 1, pay: { brand: "visa" } }, { id: 2, pay: { iban: "GB00" } }, { id: 3, pay: null }, { id: 4, pay: [{ brand: "a" }, { brand: "b" }] }] {',
      '      let kind = match o.pay { Card => concat("card ", Card.brand), Bank => "bank", [Card] => "cards", _ => "none" }',
      '      store { id: o.id, kind: kind } -> s { key: .id }',
      '    }',
      '  }',
      '  run A',
      '}',
      '',
    ].join('\n');
    const result = await c.start({ entry, files: [{ path: entry, text }] }, { sources: {} });
    expect(result.status, result.status === 'failed' ? result.error.message : '').toBe('completed');
    expect(await c.store(result.runId, 's')).toEqual({
      1: { id: 1, kind: 'card visa' },
      2: { id: 2, kind: 'bank' },
      3: { id: 3, kind: 'none' },
      4: { id: 4, kind: 'cards' },
    });
    await c.expectVerified(result.runId);
  });

  it('a name pattern its arm does not read is a misspelt schema (E3014), with the schema it is close to', () => {
    const text = TEXT.replace('[Entry] ->', '[Entyr] ->').replace('[only] -> store { id: name, got: "one", first: only.id }', '[only] -> store { id: name, got: "one" }');
    const found = checkSource(text, ENTRY).filter((d) => d.severity === 'error');
    expect(found.map((d) => [d.code, d.message, d.help])).toEqual([
      ['E3014', 'Unknown schema `only`', 'a name that is no declared schema binds only when its arm reads it (`[single] ->` binds the one item of a one-item list)'],
      ['E3014', 'Unknown schema `Entyr`', 'did you mean `Entry`?'],
    ]);
  });
});
