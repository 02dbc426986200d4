/**
 * What the pagination tests that run the built CLI share: a temp folder with a log, the CLI run
 * in it, the records a run stored, and the one-fetch sync mission they run against a LocalServer
 * (a fetch whose answer is stored by `.id` in a sql store `items`).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { builtCli, runCli, runIdOf, type CliResult } from '../durability/support/cli-build.js';

export const syncMission = (name: string, base: string, fetch: string, table = 'items') => `mission ${name} {
  source Api { auth: none, base: "${base}" }
  store items: sql("${table}")
  action Sync {
    ${fetch}
    store response -> items { key: .id }
  }
  run Sync
}
`;

export interface CliDir {
  dir: string;
  /** `reqon ARGS --db DIR/DB` in the folder (DB: `reqon.db` unless given). */
  reqon(args: string[], db?: string): Promise<CliResult>;
  /** The ids of the records `run` (a CLI result or a run id) stored in `store`, in the store's order. */
  storedIds(run: CliResult | string, store?: string, db?: string): Promise<unknown[]>;
  write(file: string, text: string): void;
  close(): void;
}

export function openCliDir(prefix: string): CliDir {
  const cli = builtCli();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  const reqon = (args: string[], db = 'reqon.db') => runCli(cli, [...args, '--db', path.join(dir, db)], { cwd: dir });
  return {
    dir,
    reqon,
    storedIds: async (run, store = 'items', db) =>
      (JSON.parse((await reqon(['store', typeof run === 'string' ? run : runIdOf(run), store, '--json'], db)).stdout) as { record: { id: unknown } }[]).map((r) => r.record.id),
    write: (file, text) => fs.writeFileSync(path.join(dir, file), text),
    close: () => fs.rmSync(dir, { recursive: true, force: true }),
  };
}
