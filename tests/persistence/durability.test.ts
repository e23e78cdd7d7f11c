import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Durability, FileSessionStore, SqliteSessionStore } from '../../src/persistence/index';
import { InvalidArgumentError } from '../../src/state/errors';
import { tempDir } from './fixtures';

let dir: string;
let remove: () => Promise<void>;
const children: ChildProcess[] = [];
beforeEach(async () => {
  ({ dir, remove } = await tempDir());
});
afterEach(async () => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
  await remove();
});

const kinds = [
  {
    name: 'FileSessionStore',
    arg: 'file',
    path: () => join(dir, 'sessions'),
    open: (path: string, durability?: Durability) => new FileSessionStore(path, { durability }),
  },
  {
    name: 'SqliteSessionStore',
    arg: 'sqlite',
    path: () => join(dir, 'sessions.db'),
    open: (path: string, durability?: Durability) => new SqliteSessionStore(path, { durability }),
  },
] as const;

describe.each(kinds)('$name durability', (kind) => {
  it("is 'full' unless asked, and 'process' when asked", async () => {
    const full = kind.open(kind.path());
    const fast = kind.open(kind.path(), 'process');
    expect([full.durability, fast.durability]).toEqual(['full', 'process']);
    await Promise.all([full.close(), fast.close()]);
  });

  it('refuses a durability it does not know, naming the option', () => {
    const error = (() => {
      try {
        kind.open(kind.path(), 'fast' as Durability);
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect((error as Error).message).toContain('options.durability');
    expect((error as Error).message).toContain('fast');
  });

  it('refuses a durability that JSON cannot write (a BigInt, NaN) with InvalidArgumentError showing it', () => {
    for (const [value, shown] of [
      [10n, '10n'],
      [Number.NaN, 'NaN'],
    ] as const) {
      const error = (() => {
        try {
          kind.open(kind.path(), value as unknown as Durability);
        } catch (e) {
          return e;
        }
      })();
      expect(error).toBeInstanceOf(InvalidArgumentError);
      expect((error as Error).message).toContain(`options.durability: ${shown} is not one of`);
    }
  });

  it("'process': a process killed with SIGKILL while it saves loses no acknowledged save", async () => {
    const path = kind.path();
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', 'tests/persistence/support/durable-saver.ts', kind.arg, path, 'run', 'process'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    children.push(child);
    let output = '';
    const acknowledged = () => [...output.matchAll(/^saved (\d+)$/gm)].map((m) => Number(m[1]));
    const enough = new Promise<void>((resolve) => {
      child.stdout?.on('data', (d) => {
        output += d;
        if (acknowledged().length >= 40) resolve();
      });
    });
    child.stderr?.on('data', (d) => {
      output += d;
    });
    const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
    const early = await Promise.race([enough.then(() => null), exited]);
    if (early) throw new Error(`the saver exited before it was killed: ${output}`);
    // Killed while it goes on saving: the kill lands in the middle of some save.
    child.kill('SIGKILL');
    expect((await exited)[1]).toBe('SIGKILL');
    expect(output).toContain('durability process\n');

    const last = Math.max(...acknowledged());
    const store = kind.open(path);
    const loaded = await store.load('run');
    if (!loaded) throw new Error('the session is gone');
    // The save in flight may or may not have landed; every acknowledged one has.
    expect(loaded.version).toBeGreaterThanOrEqual(last);
    expect(loaded.state.stepCount()).toBe(loaded.version);
    expect((await store.loadCheckpoint('run', last))?.state.stepCount()).toBe(last);
    // And the session goes on from what was loaded.
    expect(await store.save('run', loaded.state.withUserMessage('after'), loaded.version)).toBe(
      loaded.version + 1,
    );
    await store.close();
  }, 60_000);

  it("'full': 50 sessions saving at once (group commit), killed with SIGKILL, lose no acknowledged save", async () => {
    const path = kind.path();
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', 'tests/persistence/support/group-saver.ts', kind.arg, path, '50'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    children.push(child);
    let output = '';
    /** The newest acknowledged version of each session. */
    const acknowledged = () => {
      const last = new Map<string, number>();
      for (const [, id, version] of output.matchAll(/^saved (\S+) (\d+)$/gm))
        last.set(id as string, Math.max(last.get(id as string) ?? 0, Number(version)));
      return last;
    };
    const enough = new Promise<void>((resolve) => {
      child.stdout?.on('data', (d) => {
        output += d;
        const last = acknowledged();
        // Every session has saved a few times: the kill lands among saves of all of them.
        if (last.size === 50 && Math.min(...last.values()) >= 5) resolve();
      });
    });
    child.stderr?.on('data', (d) => {
      output += d;
    });
    const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
    const early = await Promise.race([enough.then(() => null), exited]);
    if (early) throw new Error(`the saver exited before it was killed: ${output}`);
    child.kill('SIGKILL');
    expect((await exited)[1]).toBe('SIGKILL');

    const last = acknowledged();
    expect(last.size).toBe(50);
    const store = kind.open(path);
    for (const [id, version] of last) {
      const loaded = await store.load(id);
      if (!loaded) throw new Error(`session ${id} is gone`);
      // A save in flight may or may not have landed; every acknowledged one has.
      expect(loaded.version).toBeGreaterThanOrEqual(version);
      expect(loaded.state.stepCount()).toBe(loaded.version);
      expect((await store.loadCheckpoint(id, version))?.state.stepCount()).toBe(version);
      expect(await store.save(id, loaded.state.withUserMessage('after'), loaded.version)).toBe(
        loaded.version + 1,
      );
    }
    await store.close();
  }, 60_000);
});
