/**
 * Checkpoints of the log's WAL off the main thread.
 *
 * SQLite's own autocheckpoint runs inside the COMMIT that takes the WAL past 1,000 frames: that
 * commit copies the frames into the database file and fsyncs it, on the main thread, while every
 * run of the process waits. On the bench's 100 runs × 10 POSTs (six WAL frames an effect) they
 * were two thirds of COMMIT's time on the main thread; run elsewhere, those POSTs measured about
 * 10 % faster (2026-12-05, one sitting, four alternating passes each: 3,835 against 3,492
 * effects/s, medians), sequential POSTs the same. So the main connection turns autocheckpoint
 * off and, after each of its write transactions, reads the WAL's state (`wal_checkpoint(NOOP)`:
 * two counters, no I/O). Once `CHECKPOINT_AT_FRAMES` frames of it are not yet copied back, a
 * worker thread with its own connection runs PASSIVE checkpoints, which never block this
 * connection's writes, until it has caught up; SQLite then restarts the WAL from its beginning
 * at the next write, as before.
 *
 * Durability is SQLite's, unchanged: a checkpoint syncs the WAL before copying and the database
 * file before the WAL may be reused, whichever connection runs it; a commit's durability is the
 * WAL's fsync (group-commit.ts), never a checkpoint's.
 *
 * Under writes that never pause, no checkpoint catches the WAL's end (each copies what was there
 * when it began, with two fsyncs), and the WAL restarts only once a checkpoint has copied all of
 * it: past `MAIN_CHECKPOINT_AT_FRAMES` the main connection checkpoints itself, copying the little
 * the worker has not, so the WAL stays bounded whatever the worker does — while this process
 * writes alone: several processes writing without a pause can keep any checkpoint from catching
 * the end (engine/log/README.md).
 *
 * The worker starts on first need, so a short command (a `reqon run` of a few steps) never pays
 * for a thread. If it cannot start or fails (no worker threads, the driver not loadable there, an
 * I/O error), the connection goes back to SQLite's autocheckpoint.
 */
import { createRequire } from 'node:module';
import { Worker, type WorkerOptions } from 'node:worker_threads';
import type Database from 'better-sqlite3';

/** SQLite's default autocheckpoint threshold: the WAL's length at which a checkpoint is due. */
export const CHECKPOINT_AT_FRAMES = 1000;
/** The WAL's length at which the main connection checkpoints the rest itself (writes that never pause: no worker's checkpoint catches the end). */
const MAIN_CHECKPOINT_AT_FRAMES = 4 * CHECKPOINT_AT_FRAMES;
/** How long close() waits for the worker to close its connection before terminating it. */
const CLOSE_WAIT_MS = 5_000;
/** PASSIVE checkpoints a worker runs in a row while writes keep adding frames during each. */
const MAX_ROUNDS = 8;

interface WalState {
  busy: number;
  /** Frames in the WAL. */
  log: number;
  /** Of them, copied back into the database file. */
  checkpointed: number;
}

type WorkerReply = ({ ok: true } & WalState) | { ok: false; message: string };

// Inline (eval) rather than a file beside this one: the CLI bundle and Electron load the engine
// from places where a separate worker file would have to be found; the driver's path is resolved
// here and passed in.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
let db;
try {
  db = new Database(workerData.dbPath, { fileMustExist: true });
  db.pragma('synchronous = NORMAL');
} catch (error) {
  parentPort.postMessage({ ok: false, message: String((error && error.message) || error) });
}
const checkpoint = db && db.prepare('PRAGMA wal_checkpoint(PASSIVE)');
parentPort.on('message', (message) => {
  if (message === 'close') {
    if (db) db.close();
    parentPort.close();
    return;
  }
  if (!db) return;
  try {
    let state;
    for (let round = 0; round < workerData.maxRounds; round++) {
      state = checkpoint.get();
      if (state.busy || state.checkpointed >= state.log) break;
    }
    parentPort.postMessage({ ok: true, ...state });
  } catch (error) {
    parentPort.postMessage({ ok: false, message: String((error && error.message) || error) });
  }
});
`;

export class WalCheckpointer {
  private worker: Worker | null = null;
  /** A checkpoint was asked of the worker and has not answered yet. */
  private running = false;
  /** The worker could not start or failed: SQLite's autocheckpoint is back on. */
  private failed = false;
  private closing: Promise<void> | undefined;
  private readonly walState: Database.Statement<[], WalState>;
  /** Checkpoints run by the worker, and by the main connection past MAIN_CHECKPOINT_AT_FRAMES. */
  readonly checkpoints: { offMainThread: number; onMainThread: number; fellBack?: string } = { offMainThread: 0, onMainThread: 0 };

  constructor(
    private readonly db: Database.Database,
    private readonly dbPath: string,
    /** Starts the worker (tests give one that fails). */
    private readonly spawn: (source: string, options: WorkerOptions) => Worker = (source, options) => new Worker(source, options),
  ) {
    this.db.pragma('wal_autocheckpoint = 0');
    this.walState = db.prepare('PRAGMA wal_checkpoint(NOOP)');
  }

  /** After each write transaction of the main connection; never throws (a commit's callers wait on it). */
  afterCommit(): void {
    if (this.failed) return;
    try {
      this.check();
    } catch (error) {
      this.fail(error instanceof Error ? error.message : String(error));
    }
  }

  private check(): void {
    const state = this.walState.get()!;
    if (state.checkpointed >= state.log) return;
    if (state.log >= MAIN_CHECKPOINT_AT_FRAMES) {
      // Busy while the worker holds the checkpoint: tried again after the next commit.
      const [done] = this.db.pragma('wal_checkpoint(PASSIVE)') as WalState[];
      if (done?.busy === 0) this.checkpoints.onMainThread++;
      return;
    }
    // A worker asked after every commit past the threshold ran a checkpoint, with its two
    // fsyncs, per commit of a run of POSTs, each racing that run's own fsync: asked per 1,000
    // frames, the sequential POSTs measured as fast as with SQLite's own checkpoints.
    if (state.log - state.checkpointed >= CHECKPOINT_AT_FRAMES && !this.running) this.ask();
  }

  /**
   * Stops the worker (closing its connection) so the main connection is the last to close; one
   * that has not exited within CLOSE_WAIT_MS (a checkpoint stuck on slow storage) is terminated,
   * so closing the log never hangs on it. Called twice, the second waits for the first.
   */
  close(): Promise<void> {
    this.closing ??= this.stopWorker();
    return this.closing;
  }

  private async stopWorker(): Promise<void> {
    const worker = this.worker;
    this.worker = null;
    if (worker === null) return;
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    // Referenced again while it closes: a process with nothing else left to do waits for it
    // rather than ending with this promise unsettled (the CLI then reports no outcome at all).
    worker.ref();
    worker.postMessage('close');
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), CLOSE_WAIT_MS)));
    if ((await Promise.race([exited, late])) === 'late') await worker.terminate();
    clearTimeout(timer);
  }

  private ask(): void {
    const worker = this.worker ?? this.startWorker();
    if (worker === null) return;
    this.running = true;
    worker.postMessage('checkpoint');
  }

  private startWorker(): Worker | null {
    try {
      const driver = createRequire(import.meta.url).resolve('better-sqlite3');
      const worker = this.spawn(WORKER_SOURCE, { eval: true, workerData: { driver, dbPath: this.dbPath, maxRounds: MAX_ROUNDS } });
      // A checkpoint is never a reason to keep the process alive; a process that exits without
      // closing the log leaves the WAL to the next opener, as a crash does.
      worker.unref();
      worker.on('message', (reply: WorkerReply) => {
        this.running = false;
        if (reply.ok) this.checkpoints.offMainThread++;
        else this.fail(reply.message);
      });
      worker.on('error', (error) => this.fail(error.message));
      worker.on('exit', (code) => {
        this.running = false;
        if (this.worker === worker) this.fail(`its worker thread exited (code ${code})`);
      });
      this.worker = worker;
      return worker;
    } catch (error) {
      this.fail(error instanceof Error ? error.message : String(error));
      return null;
    }
  }

  /** Hands checkpoints back to SQLite, saying why in the log's stats (`walCheckpoints.fellBack`). */
  private fail(why: string): void {
    if (this.failed) return;
    this.failed = true;
    this.checkpoints.fellBack = why;
    const worker = this.worker;
    this.worker = null;
    void worker?.terminate();
    try {
      if (this.db.open) this.db.pragma(`wal_autocheckpoint = ${CHECKPOINT_AT_FRAMES}`);
    } catch {
      // The connection is closing or broken: its next write reports that.
    }
  }
}
