/**
 * `reqon log copy` that loses a log database mid-copy says what the target holds and what to do
 * — copy again into an empty target — not the generic advice for a run (`reqon resume`, a
 * worker), which no half-copied run can take (probe 113 K2). The copy's logs are stand-ins.
 */
import { describe, expect, it, vi } from 'vitest';
import type { EventLog } from '../../engine/log/log.js';

const lost = Object.assign(new Error('Connection terminated unexpectedly'), { name: 'Error' });

vi.mock('../../engine/cli/engine-context.js', async (importOriginal) => ({
  ...(await importOriginal<typeof import('../../engine/cli/engine-context.js')>()),
  openCliLog: async () => ({ close: async () => {} }) as unknown as EventLog,
}));
vi.mock('../../engine/cli/log-copy.js', async (importOriginal) => ({
  ...(await importOriginal<typeof import('../../engine/cli/log-copy.js')>()),
  copyLog: async () => {
    throw lost;
  },
}));

describe('reqon log copy, a log database lost mid-copy', () => {
  it('exit 1, one line: the source as it was, the target a part to throw away, copy again — no resume advice', async () => {
    const { command } = await import('../../engine/cli/commands/log.js');
    const err: string[] = [];
    const code = await command.run(['copy'], { from: 'postgres://u@127.0.0.1:1/a', to: 'postgres://u@127.0.0.1:1/b' }, { stdout: () => {}, stderr: (t) => err.push(t) });
    expect(code).toBe(1);
    expect(err.join('')).toBe(
      'reqon log copy: lost a log database mid-copy (Connection terminated unexpectedly): the source is as it was; the target may hold a part of the copy, which no worker or resume carries on — once the database is back, copy again into an empty target (delete that database, or its file)\n',
    );
  });

  it('with --append, never the advice to delete the target, which holds runs of its own (helper 110)', async () => {
    const { command } = await import('../../engine/cli/commands/log.js');
    const err: string[] = [];
    const code = await command.run(['copy'], { from: 'postgres://u@127.0.0.1:1/a', to: 'postgres://u@127.0.0.1:1/b', append: true }, { stdout: () => {}, stderr: (t) => err.push(t) });
    expect(code).toBe(1);
    expect(err.join('')).toMatch(/the target may hold a part of the copy beside its own runs .*look at it with `reqon runs` before copying again\n$/);
    expect(err.join('')).not.toMatch(/delete/);
  });
});
