/**
 * `reqon export RUN_ID [--out FILE]` — one run as a bundle (engine/executor/run-bundle.ts): its
 * mission text, its options without secrets, its events. To stdout (`> run.reqonrun`) or a file.
 * Written a page of events at a time, so a run of any length streams out in bounded memory.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { BundleError, exportRunText, MAX_BUNDLE_BYTES } from '../../executor/run-bundle.js';
import type { CliIo, CommandModule } from '../command-module.js';
import { openCliLog } from '../engine-context.js';
import { EXIT_OK, EXIT_USAGE, type ExitCode } from '../exit-codes.js';
import { CliError } from '../cli-error.js';

export const command: CommandModule = {
  configure(cmd: Command): void {
    cmd.argument('<runId>', 'the run to export').option('--out <file>', 'write the bundle to this file instead of stdout');
  },

  async run(args: unknown[], options: Record<string, unknown>, io: CliIo): Promise<ExitCode> {
    const runId = args[0] as string;
    const log = await openCliLog(options.db, { existing: true });
    const out = typeof options.out === 'string' ? BundleFile.open(options.out) : undefined;
    try {
      let bytes = 0;
      for await (const piece of exportRunText(log, runId)) {
        bytes += Buffer.byteLength(piece);
        if (out) out.write(piece);
        else io.stdout(piece);
        // A turn of the event loop between pages: a reader gone away (`| head`) is an EPIPE the
        // program ends on before the rest of the run is read (SQLite's reads resolve at once).
        await new Promise((resolve) => setImmediate(resolve));
      }
      out?.finish();
      if (bytes > MAX_BUNDLE_BYTES) {
        io.stderr(`reqon: note: this bundle is ${(bytes / 1024 / 1024).toFixed(0)} MB, more than the ${MAX_BUNDLE_BYTES / 1024 / 1024} MB \`reqon import\` and the studio take\n`);
      }
      return EXIT_OK;
    } catch (e) {
      out?.abandon();
      if (!(e instanceof BundleError)) throw e;
      io.stderr(`reqon: ${e.message}; list runs with \`reqon runs\`\n`);
      return EXIT_USAGE; // the one BundleError of an export: the id names no run
    } finally {
      await log.close();
    }
  },
};

/**
 * `--out FILE`, written as a shell's `>` would write it, but whole or not at all where it can be:
 * a plain file (or a path that is none yet) is written through a temporary file beside it —
 * beside what a symlink names, dangling or not — and renamed over it once whole, with the mode it
 * had, so an export that fails halfway (a full disk, a lost log) leaves FILE as it was. A file
 * this user may not write is refused; anything else — a FIFO, a device (/dev/stdout), a file with
 * hard links, a writable file in a folder this user may not create files in — is written in
 * place, as it streams. A path it cannot write is one line (exit 2), not a stack trace.
 */
class BundleFile {
  /** Set once the fd is closed: closing it twice could close a file opened since under its number. */
  private closed = false;

  private constructor(
    private readonly file: string,
    /** The temporary file renamed over `target` at the end; null when writing in place. */
    private readonly temporary: string | null,
    private readonly target: string,
    private readonly fd: number,
  ) {}

  static open(file: string): BundleFile {
    try {
      const target = linkTarget(file);
      const stat = fs.statSync(target, { throwIfNoEntry: false });
      if (stat?.isDirectory()) throw Object.assign(new Error('is a folder'), { code: 'EISDIR' });
      // What a shell's `>` would refuse is refused: a file this user may not write.
      if (stat !== undefined) fs.accessSync(target, fs.constants.W_OK);
      // Not a plain file, or one with other names (hard links) that must see the new content: in place.
      if (stat !== undefined && (!stat.isFile() || stat.nlink > 1)) return new BundleFile(file, null, target, fs.openSync(target, 'w'));
      const temporary = path.join(path.dirname(target), `.${path.basename(target)}.${process.pid}.partial`);
      let fd: number;
      try {
        fd = fs.openSync(temporary, 'wx', stat === undefined ? 0o666 : stat.mode & 0o7777);
      } catch (error) {
        // A folder this user may not create files in, holding a file it may write: in place.
        const code = (error as NodeJS.ErrnoException).code;
        if (stat !== undefined && (code === 'EACCES' || code === 'EPERM' || code === 'EROFS')) return new BundleFile(file, null, target, fs.openSync(target, 'w'));
        throw error;
      }
      // The process umask narrowed the mode open gave it: a bundle meant to be private stays so, and no wider.
      if (stat !== undefined) fs.fchmodSync(fd, stat.mode & 0o7777);
      return new BundleFile(file, temporary, target, fd);
    } catch (error) {
      throw cannotWrite(file, error);
    }
  }

  write(text: string): void {
    try {
      fs.writeSync(this.fd, text);
    } catch (error) {
      this.abandon();
      throw cannotWrite(this.file, error);
    }
  }

  finish(): void {
    try {
      if (this.temporary === null) {
        this.close();
        return;
      }
      fs.fsyncSync(this.fd);
      this.close();
      fs.renameSync(this.temporary, this.target);
    } catch (error) {
      this.abandon();
      throw cannotWrite(this.file, error);
    }
  }

  /** Drops the temporary file; FILE is untouched (written in place, it holds what was written). */
  abandon(): void {
    try {
      this.close();
    } finally {
      if (this.temporary !== null) fs.rmSync(this.temporary, { force: true });
    }
  }

  private close(): void {
    if (this.closed) return;
    this.closed = true;
    fs.closeSync(this.fd);
  }
}

/** The file a path names through any symlinks, dangling ones included (the link is kept; what it names is written). */
function linkTarget(file: string): string {
  let current = file;
  for (let hops = 0; hops < 40; hops++) {
    const stat = fs.lstatSync(current, { throwIfNoEntry: false });
    if (!stat?.isSymbolicLink()) return current;
    current = path.resolve(path.dirname(current), fs.readlinkSync(current));
  }
  throw Object.assign(new Error('too many levels of symbolic links'), { code: 'ELOOP' });
}

function cannotWrite(file: string, error: unknown): CliError {
  const code = (error as NodeJS.ErrnoException).code;
  const why =
    code === 'ENOENT' ? 'no such folder' : code === 'EISDIR' ? 'it is a folder' : code === 'EACCES' || code === 'EPERM' ? 'permission denied' : code === 'ENOSPC' ? 'the disk is full' : (error as Error).message;
  return new CliError(`cannot write the bundle to ${file}: ${why}`);
}
