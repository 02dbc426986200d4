/**
 * The crash lab on requests that differ only in a request header or in their body, sent by a
 * concurrent loop, with the real CLI. The proxy matched answers by method and URL in arrival
 * order, and the reference recorded them in the order the API finished them: the API answers
 * EUR last, so the armed run's EUR request (sent first) got USD's recorded price and note, the
 * stores differed, and the lab said ✗ for a mission that survives. Answers now go by the
 * request's whole identity (method, URL, the mission's headers, the body with the run's
 * now()/random() values and id taken out), in order among identical requests only.
 */
import { describe, expect, it } from 'vitest';
import { FakeApi } from '../support/fake-api.js';
import { expectSurvivesOneCrash, useLabStudio } from './support/lab-studio.js';

const PRICES: Record<string, number> = { EUR: 1.1, USD: 1 };
const slow = (code: unknown) => new Promise((r) => setTimeout(r, code === 'EUR' ? 400 : 0));

describe('crash lab on requests told apart by a header or a body', () => {
  const lab = useLabStudio('crash-lab-identity.vague', () => {
    let serial = 0;
    return new FakeApi()
      .on('GET /currencies', { body: [{ code: 'EUR' }, { code: 'USD' }] })
      // EUR is answered last: the reference records USD's answers first.
      .on('GET /price', async (req) => {
        const code = req.headers['x-currency'];
        await slow(code);
        return { body: { price: PRICES[String(code)] ?? null } };
      })
      .on('POST /notes', async (req) => {
        const code = (req.body as { code?: string }).code;
        await slow(code);
        return { status: 201, body: { note: `${code}-${++serial}` } };
      });
  });

  it('answers each request with what the reference got for that request', async () => {
    await expectSurvivesOneCrash(lab, 'after-effect:4');
    // Only the reference reached the API.
    expect(lab.api.requests.length).toBe(5);
  }, 180_000);
});
