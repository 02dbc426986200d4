/**
 * `reqon store RUN_ID STORE [--at SEQ] [--json]` — a store's records as the run wrote them, at the
 * end of the run or just after `seq` (a fold of the run's own `store.write` events), sorted by key.
 * Of a store kept across runs (sql, nosql, file, postgrest) that is the run's part only: a note
 * on stderr says so.
 */
import type { Command } from 'commander';
import { MemoryStoreState } from '../../stores/memory-fold.js';
import type { CliIo, CommandModule } from '../command-module.js';
import { openCliLog } from '../engine-context.js';
import { EXIT_OK, EXIT_USAGE, type ExitCode } from '../exit-codes.js';
import { CliError } from '../cli-error.js';
import { recordedModelOf } from '../../executor/mission-cache.js';
import type { StoredEvent } from '../../log/events.js';
import type { EventLog, MissionFiles } from '../../log/log.js';
import type { StoreType } from '../../lang/ast.js';

/** The stores of a run's mission, name → type, or undefined when this engine cannot load it. */
function declaredStores(files: MissionFiles): Map<string, StoreType> | undefined {
  const model = recordedModelOf(files);
  return model ? new Map([...model.stores].map(([name, decl]) => [name, decl.type.kind])) : undefined;
}

export const command: CommandModule = {
  configure(cmd: Command): void {
    cmd.argument('<runId>').argument('<store>').option('--at <seq>', 'the state just after this seq').option('--json', 'print a JSON array of {key, record}');
  },

  async run(args: unknown[], options: Record<string, unknown>, io: CliIo): Promise<ExitCode> {
    const [runId, store] = args as [string, string];
    let at = Number.POSITIVE_INFINITY;
    if (options.at !== undefined) {
      // Digits only: Number() read "" and " " as 0, "0x10" as 16 and "1e1" as 10 (probe 112 K4).
      at = typeof options.at === 'string' && /^\d+$/.test(options.at) ? Number(options.at) : Number.NaN;
      if (!Number.isSafeInteger(at)) throw new CliError(`--at expects a seq (a whole number ≥ 0), got "${String(options.at)}"`);
    }
    const log = await openCliLog(options.db, { existing: true });
    try {
      const run = await log.getRun(runId);
      if (!run) {
        io.stderr(`reqon: no run ${runId} in this log; list runs with \`reqon runs\`\n`);
        return EXIT_USAGE;
      }
      // Past the end is no position of the run (it would silently show the end state).
      if (Number.isFinite(at) && at > run.lastSeq) throw new CliError(`--at ${at}: run ${runId} has ${run.lastSeq} events so far (seq 1 to ${run.lastSeq})`);
      const records = (await storeState(log, runId, store, at)).list(store);
      const declared = declaredStores(run.missionFiles);
      // A misspelt store (or its table's name for the store's) is no empty store: say so.
      if (records.length === 0 && declared && !declared.has(store)) {
        const names = [...declared.keys()];
        throw new CliError(`run ${runId}'s mission declares no store named "${store}" (${names.length > 0 ? `its stores: ${names.join(', ')}` : 'it declares none'})`);
      }
      // A store that outlives its run holds other runs' records too: this is not all it holds.
      const type = declared?.get(store);
      if (type !== undefined && type !== 'memory') {
        io.stderr(`note: ${store} is a ${type} store, kept across runs: this is what run ${runId} wrote to it, not everything it holds\n`);
      }
      if (options.json === true) io.stdout(`${JSON.stringify(records)}\n`);
      else if (records.length === 0) io.stdout(`(store ${store} has no records${Number.isFinite(at) ? ` at seq ${at}` : ''})\n`);
      else for (const r of records) io.stdout(`${r.key}\t${JSON.stringify(r.record)}\n`);
      return EXIT_OK;
    } finally {
      await log.close();
    }
  },
};

/** `store.write` events a read holds at most: the fold holds the store's records, never the run's log. */
const WRITES_PAGE = 5000;

/** `store`'s records in `runId` just after seq `at`: its `store.write` events folded, read a page at a time. */
async function storeState(log: EventLog, runId: string, store: string, at: number): Promise<MemoryStoreState> {
  const state = new MemoryStoreState();
  const bound = Number.isFinite(at) ? { toSeq: at } : {};
  for (let fromSeq = 1; ; ) {
    const page = await log.read(runId, { types: ['store.write'], fromSeq, limit: WRITES_PAGE, ...bound });
    for (const event of page) {
      const write = event as StoredEvent<'store.write'>;
      if (write.payload.store === store) state.apply(write);
    }
    if (page.length < WRITES_PAGE) return state;
    fromSeq = page[page.length - 1]!.seq + 1;
  }
}
