/**
 * A replayed `set` into a store of the log's own database is accepted without parsing its event
 * when the stored text is exactly JSON.stringify of the payload the write would record
 * (store-step.ts recordedAsPlanned). That holds only if the text the logs splice for a table
 * write (rows.ts storeWritePayloadJson) IS that JSON: checked here on hostile values.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { TableStoreWrite } from '../../engine/log/log.js';
import { storeWritePayloadJson } from '../../engine/log/rows.js';

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
