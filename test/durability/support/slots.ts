/**
 * A counting semaphore for concurrent test cases: at most `size` bodies run at once, the rest
 * wait in arrival order. Keeps a matrix of CLI-spawning cases within what two cores can run.
 */
export class Slots {
  private free: number;
  private readonly waiting: (() => void)[] = [];

  constructor(size: number) {
    if (!Number.isInteger(size) || size < 1) throw new Error(`Slots needs a size of at least 1, got ${size}`);
    this.free = size;
  }

  async run<T>(body: () => Promise<T>): Promise<T> {
    if (this.free > 0) this.free--;
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
    try {
      return await body();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.free++;
    }
  }
}
