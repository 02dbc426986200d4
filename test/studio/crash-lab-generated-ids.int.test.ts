/**
 * The crash lab on a mission that sends and stores ids from generateId() and a now(), which the
 * API echoes back, with the real CLI. Such ids are derived from the run, so the reference and the
 * armed run generate others, and the armed run is answered the reference's echo: the lab judged
 * the stores different (✗) and the POST bodies "not checked" for a mission that survives. Generated
 * ids are now taken out as their place (step and count), and the armed run's values are compared
 * with the reference's values it was served taken out too (engine/server/lab-inputs.ts).
 */
import { describe, expect, it } from 'vitest';
import { FakeApi } from '../support/fake-api.js';
import { expectSurvivesOneCrash, useLabStudio } from './support/lab-studio.js';

describe('crash lab on generated ids the API echoes', () => {
  const lab = useLabStudio('crash-lab-generated-ids.vague', () =>
    new FakeApi()
      .on('GET /items', { body: [{ id: 'i1' }, { id: 'i2' }, { id: 'i3' }] })
      .on('POST /notes', (req) => ({ status: 201, body: { echo: req.body } })),
  );

  it('survives a crash between the POSTs, every check made and held', async () => {
    const done = await expectSurvivesOneCrash(lab, 'after-effect:3');
    // What was compared is what the mission stored: the generated ids as their places.
    const stores = done.verdict!.checks.find((c) => c.name === 'stores')!;
    expect(stores.label).toContain('generateId()');
    // Only the reference reached the API: one GET and three POSTs.
    expect(lab.api.requests.length).toBe(4);
  }, 180_000);
});
