/**
 * The crash lab on a mission whose read carries now() in its query and timestamp() in a header, with
 * the real CLI. The proxy matched a request's URL and headers exactly (only the run id taken out),
 * so the armed run's read, sent at another time with another timestamp, was "a request the reference
 * never made": it was answered 502 and the lab said ✕ for a mission that survives. The values
 * now()/timestamp() returned to each run are now taken out of query values, path segments and
 * header values too, as they already were out of bodies.
 */
import { describe, expect, it } from 'vitest';
import { FakeApi } from '../support/fake-api.js';
import { expectSurvivesOneCrash, useLabStudio } from './support/lab-studio.js';

describe('crash lab on a read that carries now() and timestamp()', () => {
  const lab = useLabStudio('crash-lab-clock.vague', () => {
    let serial = 0;
    return new FakeApi()
      .on('GET /items?*', { body: [{ id: 'a' }, { id: 'b' }, { id: 'c' }] })
      .on('POST /marks', () => ({ status: 201, body: { mark: ++serial } }));
  });

  it('answers the armed run\'s read with the reference\'s answer and says ✓', async () => {
    const done = await expectSurvivesOneCrash(lab, 'after-effect:2');
    expect(done.verdict!.checks.find((c) => c.name === 'requests')!.label).toContain('1 with a now()/timestamp() value of its own');
    // Only the reference reached the API: one read and three writes.
    expect(lab.api.requests.length).toBe(4);
  }, 180_000);
});
