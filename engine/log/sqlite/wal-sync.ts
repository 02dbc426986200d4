/**
 * fdatasync of the log's WAL file off the main thread, one at a time, shared by everyone waiting.
 *
 * A group committed with synchronous=NORMAL has its frames in the WAL (in the OS cache, so it
 * survives kill -9) but not yet on disk. `sync()` resolves once an fdatasync of the WAL file that
 * STARTED after the call has returned: it covers every frame written before the call, ours or
 * another process's (fdatasync flushes the file, whichever descriptor names it). While one runs,
 * callers queue for the next, so commits that pile up during a sync share the following one, and
 * the event loop keeps serving requests and timers while the disk works.
 *
 * The file is opened read-only on first use and checked before every sync: if the WAL was
 * replaced (a new inode at the path, or ours unlinked), it is reopened. SQLite keeps the WAL while
 * any connection is open, and this log keeps its own connection open until the syncs are done
 * (`idle()` before closing), so that is a safety net, not a path taken.
 */
import fs from 'node:fs';

interface Waiter {
  resolve: () => void;
  reject: (error: Error) => void;
}

export class WalSync {
  private fd: number | null = null;
  private inode = 0;
  private running = false;
  private waiting: Waiter[] = [];
  private idleWaiters: (() => void)[] = [];
  /** fdatasync calls made so far. */
  syncs = 0;

  constructor(private readonly walPath: string) {}

  sync(): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.waiting.push({ resolve, reject });
      if (!this.running) this.start();
    });
  }

  /** A sync is running or waiting to. */
  get busy(): boolean {
    return this.running || this.waiting.length > 0;
  }

  /** Resolves when no sync is running or waiting. */
  idle(): Promise<void> {
    if (!this.running && this.waiting.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Closes the file; call after `idle()`. */
  close(): void {
    if (this.fd !== null) fs.closeSync(this.fd);
    this.fd = null;
  }

  private start(): void {
    const batch = this.waiting;
    this.waiting = [];
    let fd: number;
    try {
      fd = this.descriptor();
    } catch (error) {
      this.finish(batch, error as Error);
      return;
    }
    this.running = true;
    this.syncs++;
    fs.fdatasync(fd, (error) => {
      this.running = false;
      this.finish(batch, error);
    });
  }

  private finish(batch: Waiter[], error: Error | null): void {
    for (const waiter of batch) {
      if (error) waiter.reject(new Error(`could not sync the log's WAL (${this.walPath}) to disk: ${error.message}`, { cause: error }));
      else waiter.resolve();
    }
    if (this.waiting.length > 0) this.start();
    else for (const resolve of this.idleWaiters.splice(0)) resolve();
  }

  /** The WAL's descriptor, (re)opened when the path no longer names the file we hold. */
  private descriptor(): number {
    if (this.fd !== null) {
      const held = fs.fstatSync(this.fd);
      if (held.nlink > 0 && held.ino === this.inode && fs.statSync(this.walPath).ino === this.inode) return this.fd;
      fs.closeSync(this.fd);
      this.fd = null;
    }
    const fd = fs.openSync(this.walPath, 'r');
    this.inode = fs.fstatSync(fd).ino;
    this.fd = fd;
    return fd;
  }
}
