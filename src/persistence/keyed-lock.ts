/**
 * Runs tasks with the same key one after another (in this process); tasks with other keys run
 * freely. A key's entry is dropped when its last task ends, so the map holds only busy keys.
 *
 * @example
 * const lock = new KeyedLock();
 * await Promise.all([lock.run('a', saveOne), lock.run('a', saveTwo)]); // saveTwo starts after saveOne
 */
export class KeyedLock {
  private readonly tails = new Map<string, Promise<unknown>>();

  async run<T>(key: string, task: () => Promise<T>): Promise<T> {
    // A tail never rejects (see below), so the task starts once the previous one has settled.
    const result = (this.tails.get(key) ?? Promise.resolve()).then(task);
    // The next task waits for this one to settle either way; this task's outcome reaches its own
    // caller through `result`, so the tail can drop it.
    const tail = result.then(
      () => undefined,
      () => undefined,
    );
    this.tails.set(key, tail);
    try {
      return await result;
    } finally {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    }
  }
}
