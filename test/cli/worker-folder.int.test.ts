/**
 * `reqon worker missions/` (as the README shows): a folder of missions registers each one's
 * schedule — its .vague files and the folder missions directly under it. It was read as one folder
 * mission and refused for having no mission.vague. A folder mission given itself is still one.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtCli, runCli } from '../durability/support/cli-build.js';

let dir: string;
const scheduled = (name: string) => `mission ${name} {\n  schedule: every 1 hours\n  store s: memory("s")\n  action A {\n    store { id: 1 } -> s { key: .id }\n  }\n  run A\n}\n`;

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reqon-worker-folder-'));
  const missions = path.join(dir, 'missions');
  fs.mkdirSync(path.join(missions, 'nightly'), { recursive: true });
  fs.writeFileSync(path.join(missions, 'a.vague'), scheduled('Alpha'));
  fs.writeFileSync(path.join(missions, 'b.vague'), scheduled('Beta'));
  fs.writeFileSync(path.join(missions, 'notes.txt'), 'not a mission');
  // Passed over, said in the progress: a file of actions only, a mission with no schedule.
  fs.writeFileSync(path.join(missions, 'part.vague'), 'action Extra {\n  let x = 1\n}\n');
  fs.writeFileSync(path.join(missions, 'manual.vague'), scheduled('Manual').replace('  schedule: every 1 hours\n', ''));
  fs.writeFileSync(path.join(missions, 'nightly', 'mission.vague'), scheduled('Nightly'));
  fs.mkdirSync(path.join(dir, 'empty'));
}, 180_000);
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const reqon = (...args: string[]) => runCli(builtCli(), [...args, '--db', path.join(dir, 'log.db')], { cwd: dir, env: { REQON_DATA_DIR: path.join(dir, 'data') } });

describe('reqon worker FOLDER', () => {
  it('registers every mission of a folder of missions', async () => {
    const result = await reqon('worker', 'missions', '--once');
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout.match(/^schedule (\w+):/gm)).toEqual(['schedule Alpha:', 'schedule Beta:', 'schedule Nightly:']);
    expect(result.stderr).toMatch(/manual\.vague: mission "Manual" has no `schedule:`: passed over/);
    expect(result.stderr).toMatch(/part\.vague: no mission here \(a folder mission's part\?\): passed over/);
  });

  it('a folder mission given itself is one mission; a folder with none is refused, saying so', async () => {
    const one = await reqon('worker', 'missions/nightly', '--once', '--quiet');
    expect(one.code, one.stderr).toBe(0);
    expect(one.stdout.match(/^schedule (\w+):/gm)).toEqual(['schedule Nightly:']);
    const none = await reqon('worker', 'empty', '--once', '--quiet');
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/empty: no missions in this folder/);
  });
});
