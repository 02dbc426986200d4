/**
 * A replayed `set` into a store of the log's own database is accepted without parsing its event
 * when the stored text is exactly the text the write would record (store-step.ts
 * recordedAsPlanned, through rows.ts isStoreWritePayloadJson). Checked here on hostile values:
 * that text (storeWritePayloadJson) is the JSON of the payload object, as a memory store's event
 * serialises it, and the in-place comparison says yes to exactly that text and no to any other.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { TableStoreWrite } from '../../engine/log/log.js';
import { isStoreWritePayloadJson, storeWritePayloadJson } from '../../engine/log/rows.js';

const text = fc.oneof(fc.string(), fc.string({ unit: 'grapheme' }), fc.string({ unit: 'binary' }), fc.constantFrom('', '"', '\\', '\u0000', '\u2028', '\ud800', '__proto__', 'é'));
const json = fc.jsonValue();
const record = fc.dictionary(text, json);

describe('storeWritePayloadJson', () => {
  it('is JSON.stringify of the payload object, field for field in its order (property)', () => {
    fc.assert(
      fc.property(text, text, text, record, fc.constantFrom('set', 'upsert') as fc.Arbitrary<'set' | 'upsert'>, fc.option(text, { nil: undefined }), (effectId, store, key, rec, op, batch) => {
        const write: TableStoreWrite = { storeKind: 'sql', table: 't', store, key, record: rec, op, stepPath: 'A/0', effectId, recordedAt: 1, ...(batch === undefined ? {} : { batch }) };
        const spliced = storeWritePayloadJson(write, JSON.stringify(rec));
        expect(spliced).toBe(JSON.stringify({ effectId, store, key, record: rec, op, batch }));
        // And it reads back as that payload.
        expect(JSON.parse(spliced)).toEqual(JSON.parse(JSON.stringify({ effectId, store, key, record: rec, op, batch })));
      }),
      { numRuns: 500 },
    );
  });
});

describe('isStoreWritePayloadJson', () => {
  const write = fc.record({ effectId: text, store: text, key: text, op: fc.constantFrom('set', 'upsert') as fc.Arbitrary<'set' | 'upsert'>, batch: fc.option(text, { nil: undefined }) });
  const full = (w: { effectId: string; store: string; key: string; op: 'set' | 'upsert'; batch?: string | undefined }, recordJson: string) =>
    storeWritePayloadJson({ storeKind: 'sql', table: 't', record: {}, stepPath: 'A/0', recordedAt: 1, ...w }, recordJson);

  it('holds for the very text (property)', () => {
    fc.assert(
      fc.property(write, record, (w, rec) => {
        const recordJson = JSON.stringify(rec);
        expect(isStoreWritePayloadJson(full(w, recordJson), w, recordJson)).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it('fails for any other text: another write\'s, a cut, an added character, an older layout (property)', () => {
    fc.assert(
      fc.property(write, write, record, record, fc.nat(), fc.string({ minLength: 1, maxLength: 3 }), (w, other, rec, otherRec, cut, extra) => {
        const recordJson = JSON.stringify(rec);
        const own = full(w, recordJson);
        const texts = [
          full(other, JSON.stringify(otherRec)),
          own.slice(0, cut % own.length),
          own.slice(0, cut % own.length) + extra + own.slice(cut % own.length),
          own + extra,
          JSON.stringify({ store: w.store, key: w.key, record: rec, op: w.op, effectId: w.effectId }),
        ];
        for (const t of texts) expect(isStoreWritePayloadJson(t, w, recordJson)).toBe(t === own);
      }),
      { numRuns: 500 },
    );
  });
});
