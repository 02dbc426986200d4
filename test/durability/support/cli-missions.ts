/**
 * The set-up shared by tests that run missions through the built CLI against a FakeApi, on a
 * temporary log of either backend: the CLI is built once per file, and after each test the API
 * is stopped and the log dropped, whatever the test did.
 *
 *   const missions = useCliMissions();
 *   const { reqon, api, target } = await missions.start(backend, 'reqon-x-', api);
 *   await reqon('run', file, '--source', `Api=${api.url}`);
 */
import { afterEach, beforeAll } from 'vitest';
import type { FakeApi } from '../../support/fake-api.js';
import { tempLogTarget, type Backend, type TempLogTarget } from '../../support/temp-log.js';
import { builtCli, runCli, type CliResult } from './cli-build.js';

export interface CliMission {
  /** The built `main.js`. */
  cli: string;
  target: TempLogTarget;
  /** The API, started. */
  api: FakeApi;
  /** `reqon …args --db <the log>`, in the log's folder. */
  reqon(...args: string[]): Promise<CliResult>;
}

/** Registers the file's hooks; `start` makes one test's log and starts its API. */
export function useCliMissions(): { start(backend: Backend, prefix: string, api: FakeApi): Promise<CliMission> } {
  let cli = '';
  let current: { target: TempLogTarget; api: FakeApi } | undefined;

  beforeAll(() => {
    cli = builtCli();
  }, 180_000);

  afterEach(async () => {
    const done = current;
    current = undefined;
    await done?.api.stop();
    await done?.target.drop();
  });

  return {
    async start(backend, prefix, api) {
      const target = await tempLogTarget(backend, prefix);
      current = { target, api };
      await api.start();
      const reqon = (...args: string[]) => runCli(cli, [...args, '--db', target.target], { cwd: target.dir });
      return { cli, target, api, reqon };
    },
  };
}
