/**
 * A run remembers the OpenAPI document of each `source S from "…"` as it was when the run started
 * (MissionFiles.attachments), as it remembers its mission: a resume, a verify and a fork read
 * that, not the disk. Before, a resume after the document was edited (an operation moved) carried on with
 * the new paths, exit 0; one whose edit reached a recorded step failed the run for good; and a
 * completed run whose document was moved "DIVERGED" under verify. The built CLI, on each backend.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { FakeApi } from '../support/fake-api.js';
import { backends, type Backend } from '../support/temp-log.js';
import { describeResult, runIdOf } from './support/cli-build.js';
import { useCliMissions } from './support/cli-missions.js';

const SPEC = (base: string, petPath: string) => `openapi: 3.0.3
info: { title: Pets, version: 1.0.0 }
servers: [ { url: "${base}/api" } ]
paths:
  /pets:
    get: { operationId: listPets, responses: { '200': { description: ok } } }
  ${petPath}:
    get:
      operationId: getPet
      parameters: [ { name: petId, in: path, required: true, schema: { type: string } } ]
      responses: { '200': { description: ok } }
`;

const MISSION = `mission PetsSpec {
  source Store from "./pets.yaml" { auth: none }
  store details: sql("spec_remembered_details")
  action List {
    call Store.listPets
    for p in response.pets {
      let petId = p.id
      call Store.getPet
      store response -> details { key: .id }
    }
  }
  run List
}
`;

const missions = useCliMissions();

function petsApi(): FakeApi {
  return new FakeApi()
    .on('GET /api/pets', { body: { pets: [{ id: 'a' }, { id: 'b' }, { id: 'c' }] } })
    .on('GET /api/pets/a', { body: { id: 'a', v: 1 } })
    .on('GET /api/pets/b', { body: { id: 'b', v: 1 } })
    .on('GET /api/pets/c', { body: { id: 'c', v: 1 } });
}

describe.each(backends)('%s: the OpenAPI document a run started with', (backend: Backend) => {
  it('is the one its resume and its verify use, whatever the file on disk says later', async () => {
    const { target, api, reqon } = await missions.start(backend, 'reqon-spec-remembered-', petsApi());
    const dir = target.dir;
    fs.writeFileSync(path.join(dir, 'pets.yaml'), SPEC(api.url, '/pets/{petId}'));
    fs.writeFileSync(path.join(dir, 'm.vague'), MISSION);

    // Killed inside the loop (before pet a's store: its GET, not yet committed, is asked again);
    // then the document moves the operation (a v2 API).
    const killed = await reqon('run', 'm.vague', '--crash-at', 'before-effect:3', '--quiet');
    expect(killed.signal, describeResult(killed)).toBe('SIGKILL');
    const runId = runIdOf(killed);
    fs.writeFileSync(path.join(dir, 'pets.yaml'), SPEC(api.url, '/v2/pets/{petId}'));
    const sent = api.requests.length;
    const resumed = await reqon('resume', runId, '--quiet');
    expect(resumed.code, describeResult(resumed)).toBe(0);
    // The operation where the run's own document put it: no /v2 request. Pet a's GET is asked again
    // unless its answer's commit reached the log before the kill (on PostgreSQL it may: GUARANTEES
    // 7 then takes the recorded answer), so it is there once or not at all.
    const after = api.lines().slice(sent);
    expect(after.slice(after[0] === 'GET /api/pets/a' ? 1 : 0)).toEqual(['GET /api/pets/b', 'GET /api/pets/c']);

    fs.renameSync(path.join(dir, 'pets.yaml'), path.join(dir, 'moved.yaml'));
    const verified = await reqon('verify', runId);
    expect(verified.code, describeResult(verified)).toBe(0);
    expect(verified.stdout).toMatch(/^verified:/);

    // An edit (a comment) checked with the document gone from where it names it: the document the
    // run remembered stands in for it (before: no document, and DIVERGED at the first call).
    fs.writeFileSync(path.join(dir, 'edited.vague'), `// reviewed\n${MISSION}`);
    const edited = await reqon('verify', runId, '--mission', 'edited.vague');
    expect(edited.code, describeResult(edited)).toBe(0);
    expect(edited.stdout).toMatch(/^verified:/);

    // A fork reads it too: cut after pet a's store, the document gone from its place and a v2 one
    // there, it asks for pets b and c where the run's own document put them.
    fs.writeFileSync(path.join(dir, 'pets.yaml'), SPEC(api.url, '/v2/pets/{petId}'));
    const events = (await reqon('events', runId, '--json')).stdout.trim().split('\n').map((l) => JSON.parse(l) as { seq: number; type: string });
    const firstWrite = events.find((e) => e.type === 'store.write')!;
    const before = api.requests.length;
    const forked = await reqon('fork', runId, '--at', String(firstWrite.seq), '--quiet');
    expect(forked.code, describeResult(forked)).toBe(0);
    expect(api.lines().slice(before)).toEqual(['GET /api/pets/b', 'GET /api/pets/c']);
  }, 120_000);
});
