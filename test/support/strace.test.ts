/** The strace reading the fsync-ordering tests rely on (test/support/strace.ts). */
import { describe, expect, it } from 'vitest';
import { regexSource, walSyncReturned } from './strace.js';

describe('walSyncReturned', () => {
  it('sees a whole sync, and a split one where it resumes, for the WAL only', () => {
    const returned = walSyncReturned(regexSource('/tmp/a (1)/reqon.db-wal'));
    const lines = [
      '100 pwrite64(12</tmp/a (1)/reqon.db-wal>, "..."..., 4152, 0) = 4152',
      '101 fdatasync(12</tmp/a (1)/reqon.db-wal>) = 0',
      '101 fdatasync(12</tmp/a (1)/reqon.db-wal> <unfinished ...>',
      '100 writev(15<TCP:[127.0.0.1:1->127.0.0.1:2]>, [{iov_base="POST / HTTP/1.1"...}], 1) = 120',
      '101 <... fdatasync resumed>) = 0',
      '102 fdatasync(9</tmp/a (1)/reqon.db>) = 0',
      '103 <... fdatasync resumed>) = 0',
      '101 fsync(12</tmp/a (1)/reqon.db-wal> <unfinished ...>',
      '101 <... fsync resumed>) = -1 EIO (Input/output error)',
      '101 <... fdatasync resumed>) = 0',
    ];
    expect(lines.map(returned)).toEqual([false, true, false, false, true, false, false, false, false, false]);
  });
});
