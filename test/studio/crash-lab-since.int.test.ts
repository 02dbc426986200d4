/**
 * The crash lab on an incremental sync (`since: lastSync`), with the real CLI. Checkpoints are
 * kept per API URL, and the armed run went through the same proxy URLs as the crash-free
 * reference: it read the checkpoint the reference had just advanced, asked for
 * `/orders?since=<then>` — a request the reference never made, answered 502 — and the lab ended
 * "not tested" with four failed checks, for any sync mission. The armed run now reaches the API
 * through URLs of its own, starts from no checkpoint as the reference did, and is judged.
 */
import { describe, expect, it } from 'vitest';
import { FakeApi } from '../support/fake-api.js';
import { expectSurvivesOneCrash, useLabStudio } from './support/lab-studio.js';

const ORDERS = [
  { id: 'o1', updatedAt: '2020-01-01T00:00:00.000Z' },
  { id: 'o2', updatedAt: '2020-01-02T00:00:00.000Z' },
];
const FIRST_SYNC = `/orders?since=${encodeURIComponent('1970-01-01T00:00:00.000Z')}`;

describe('crash lab on an incremental sync', () => {
  const lab = useLabStudio('crash-lab-since.vague', () =>
    new FakeApi()
      // A first sync asks from the start; any later since would be a route of its own.
      .on(`GET ${FIRST_SYNC}`, { body: ORDERS })
      .on('POST /ack/o1', { body: { ok: true } })
      .on('POST /ack/o2', { body: { ok: true } }),
  );

  it('serves the armed run what the reference saw, from no checkpoint', async () => {
    await expectSurvivesOneCrash(lab, 'after-effect:2');
    // Only the reference reached the API: one sync from the start, each order acked once.
    expect(lab.api.lines()).toEqual([`GET ${FIRST_SYNC}`, 'POST /ack/o1', 'POST /ack/o2']);
  }, 180_000);
});
