/**
 * Reading `strace -f -y` output: which lines show a sync of the log's WAL that has returned.
 *
 * The log syncs a run's commits on a worker thread (engine/log/sqlite/wal-sync.ts). When another
 * thread's traced call falls in between, strace splits the call into `… <unfinished ...>` and a
 * later `<... fdatasync resumed>) = 0`: the sync has returned at that second line.
 */

/** A stateful test of trace lines, in order: true for each line where a WAL sync returned 0. `wal` is a regex source for the WAL's path. */
export function walSyncReturned(wal: string): (line: string) => boolean {
  const whole = new RegExp(`\\b(fsync|fdatasync)\\(\\d+<${wal}>\\)\\s+= 0`);
  const started = new RegExp(`\\b(fsync|fdatasync)\\(\\d+<${wal}> <unfinished \\.\\.\\.>`);
  const resumed = /<\.\.\. (fsync|fdatasync) resumed>\)\s+= (-?\d+)/;
  const unfinished = new Set<string>();
  return (line) => {
    const pid = /^(\d+)\s/.exec(line)?.[1] ?? '';
    if (whole.test(line)) return true;
    if (started.test(line)) {
      unfinished.add(pid);
      return false;
    }
    const end = unfinished.has(pid) ? resumed.exec(line) : null;
    if (!end) return false;
    unfinished.delete(pid);
    return end[2] === '0';
  };
}

/** `text` as a regex source matching it literally. */
export function regexSource(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
