/** A pid no process has on this machine: an owner `host:pid:…` naming it stands for a process that died. */
export function deadPid(): number {
  for (let pid = 4_194_303; pid > 1; pid--) {
    try {
      process.kill(pid, 0);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ESRCH') return pid;
    }
  }
  throw new Error('no free pid to stand for a dead owner');
}
