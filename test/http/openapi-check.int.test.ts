/**
 * `reqon check` reads the OpenAPI documents a mission's sources name (http/openapi-check.ts): a
 * document that cannot be read or parsed is E3057 at its `from "…"`, a `call` of an operationId the
 * document lacks is E3058 with the close one — in a folder mission's action file too. A run of
 * such a mission is refused before it starts (no request leaves), where it failed at that call
 * after the steps before it took effect.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MissionInvalidError } from '../../engine/executor/mission-cache.js';
import { builtCli, openConformance, REPO, runCli, type Conformance } from '../conformance/harness.js';

const PETS = fs.readFileSync(path.join(REPO, 'assets/conformance/pets.yaml'), 'utf8');

let c: Conformance;

beforeEach(async () => {
  c = await openConformance();
  fs.writeFileSync(path.join(c.dir, 'pets.yaml'), PETS);
});

afterEach(async () => {
  await c.close();
});

function mission(spec: string, operation: string): string {
  return [
    'mission Pets {',
    `  source Store from "${spec}" { auth: none }`,
    '  source Api { auth: none, base: "http://127.0.0.1:9" }',
    '  store pets: memory("pets")',
    '  action Announce { post "/announce" { source: Api, body: { at: "start" } } }',
    '  action List {',
    '    for page in [1, 2] {',
    `      call Store.${operation}`,
    '      store response -> pets { key: .id }',
    '    }',
    '  }',
    '  run Announce then List',
    '}',
    '',
  ].join('\n');
}

describe('reqon check reads the OpenAPI documents', () => {
  it('says an operationId the document lacks (E3058, with the close one) and an unreadable document (E3057), file:line:col', async () => {
    const cli = await builtCli();
    fs.writeFileSync(path.join(c.dir, 'typo.vague'), mission('./pets.yaml', 'listPetz'));
    fs.writeFileSync(path.join(c.dir, 'missing.vague'), mission('./nowhere/pets.yaml', 'listPets'));
    fs.writeFileSync(path.join(c.dir, 'broken.yaml'), 'openapi: [unclosed\n');
    fs.writeFileSync(path.join(c.dir, 'broken.vague'), mission('./broken.yaml', 'listPets'));
    fs.writeFileSync(path.join(c.dir, 'good.vague'), mission('./pets.yaml', 'listPets'));
    const r = await runCli(cli, ['check', 'typo.vague', 'missing.vague', 'broken.vague', 'good.vague'], { cwd: c.dir });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('typo.vague: 1 error\nmissing.vague: 1 error\nbroken.vague: 1 error\ngood.vague: no errors\n');
    expect(r.stderr).toContain(`typo.vague:8:18: error[E3058]: ${path.join(c.dir, 'pets.yaml')} has no operation \`listPetz\``);
    expect(r.stderr).toContain('= help: did you mean `listPets`?');
    expect(r.stderr).toContain(`missing.vague:2:21: error[E3057]: The OpenAPI document of source \`Store\` cannot be used: cannot read ${path.join(c.dir, 'nowhere/pets.yaml')}: ENOENT`);
    expect(r.stderr).toMatch(/broken\.vague:2:21: error\[E3057\]: The OpenAPI document of source `Store` cannot be used: .*broken\.yaml: not valid YAML/);
  });

  it('in a folder mission, at the action file that calls it', async () => {
    const cli = await builtCli();
    const dir = path.join(c.dir, 'folder');
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, 'pets.yaml'), PETS);
    fs.writeFileSync(path.join(dir, 'mission.vague'), 'mission Pets {\n  source Store from "./pets.yaml" { auth: none }\n  store pets: memory("pets")\n  run List\n}\n');
    fs.writeFileSync(path.join(dir, 'list.vague'), 'action List {\n  call Store.getPets\n}\n');
    const r = await runCli(cli, ['check', 'folder'], { cwd: c.dir });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('list.vague:2:14: error[E3058]');
    expect(r.stderr).toContain('= help: did you mean `getPet`?');
  });

  it('a document no request needs (no `call`, the source has its own base) is a warning, E3059, and the run goes on', async () => {
    const cli = await builtCli();
    c.api.on('GET /a', { body: [{ id: 'a1' }] });
    const text = 'mission Plain {\n  source Api from "./missing.yaml" { auth: none, base: "http://127.0.0.1:9" }\n  store out: memory("out")\n  action A {\n    get "/a"\n    store response -> out { key: .id }\n  }\n  run A\n}\n';
    const files = c.mission('plain', text);
    const r = await runCli(cli, ['check', 'plain.vague'], { cwd: c.dir });
    expect([r.code, r.stdout]).toEqual([0, 'plain.vague: no errors, 1 warning\n']);
    expect(r.stderr).toContain('warning[E3059]');
    const result = await c.start(files, { sources: { Api: c.api.url } });
    expect(result.status).toBe('completed');
  });

  it('of a source declared twice, the first declaration is checked, as the run takes it', async () => {
    fs.writeFileSync(path.join(c.dir, 'other.yaml'), PETS.replace(/listPets/g, 'listOthers'));
    const text = mission('./other.yaml', 'listPets').replace('  source Api {', '  source Store from "./pets.yaml" { auth: none }\n  source Api {');
    const cli = await builtCli();
    fs.writeFileSync(path.join(c.dir, 'twice.vague'), text);
    const r = await runCli(cli, ['check', 'twice.vague'], { cwd: c.dir });
    expect(r.stderr).toContain(`error[E3058]: ${path.join(c.dir, 'other.yaml')} has no operation \`listPets\``);
  });

  it('a source without base whose document gives no absolute server URL is warning E3062, and its run is refused unless --source gives one', async () => {
    // Helper 62: a relative `servers: [{ url: /api/v3 }]` checked clean, and the run failed at the call after the POST had left.
    const cli = await builtCli();
    const relative = PETS.replace(/servers:\n(\s+)- url: \S+/, 'servers:\n$1- url: /api/v3');
    expect(relative).not.toBe(PETS);
    fs.writeFileSync(path.join(c.dir, 'relative.yaml'), relative);
    fs.writeFileSync(path.join(c.dir, 'relative.vague'), mission('./relative.yaml', 'listPets'));
    const r = await runCli(cli, ['check', 'relative.vague'], { cwd: c.dir });
    // A warning at check (the run may be given --source Store=…), a refusal at run start without one.
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('relative.vague:2:21: warning[E3062]: Source `Store` has no `base`, and its OpenAPI document gives none to take: its first server URL is `/api/v3`, not an absolute http(s) URL; running it without `--source Store=…` would fail at its first request');
    // A server variable with no default is no URL either (helper 63: `/%7Bversion%7D/pets` was sent).
    fs.writeFileSync(path.join(c.dir, 'variable.yaml'), PETS.replace(/servers:\n(\s+)- url: \S+/, 'servers:\n$1- url: http://127.0.0.1:9/{version}'));
    fs.writeFileSync(path.join(c.dir, 'variable.vague'), mission('./variable.yaml', 'listPets'));
    expect((await runCli(cli, ['check', 'variable.vague'], { cwd: c.dir })).stderr).toContain('its first server URL is `http://127.0.0.1:9/{version}`, with a `{variable}` that has no default');
    expect(r.stderr).toContain('= help: give the source its own `base: "https://…"`, or the run `--source Store=https://…`');
    c.api.on('POST /announce', { body: { ok: true } });
    const files = c.mission('relative', mission('./relative.yaml', 'listPets'));
    const refused = await c.start(files, { sources: { Api: c.api.url } }).then(() => undefined, (error: unknown) => error);
    expect((refused as MissionInvalidError).rendered).toContain('error[E3062]');
    expect(c.api.lines()).toEqual([]);
    c.api.on('GET /pets', { body: [{ id: 1 }] });
    expect((await c.start(files, { sources: { Api: c.api.url, Store: c.api.url } })).status).toBe('completed');
  });

  it('a run of such a mission is refused before anything is sent', async () => {
    c.api.on('POST /announce', { body: { ok: true } });
    const files = c.mission('typo', mission('./pets.yaml', 'listPetz'));
    const refused = await c.start(files, { sources: { Api: c.api.url, Store: c.api.url } }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(MissionInvalidError);
    expect((refused as MissionInvalidError).rendered).toContain('error[E3058]');
    expect(c.api.lines()).toEqual([]);
    expect(await c.log.listRuns({})).toEqual([]);
  });
});
