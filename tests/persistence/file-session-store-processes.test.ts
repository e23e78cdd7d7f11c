import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { readdir, stat, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FileSessionStore, SessionFileLockedError } from '../../src/persistence/index';
import { AgentState } from '../../src/state/agent-state';
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

/** Starts tests/persistence/support/file-saver.ts; resolves once it is ready, with its output so far. */
async function startSaver(args: string[]) {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', 'tests/persistence/support/file-saver.ts', ...args],
    {
      stdio: ['pipe', 'pipe', 'pipe'],
    },
  );
  children.push(child);
  let output = '';
  let markReady: () => void = () => undefined;
  const ready = new Promise<void>((resolve) => {
    markReady = resolve;
  });
  child.stdout?.on('data', (d) => {
    output += d;
    if (output.includes('ready\n')) markReady();
  });
  child.stderr?.on('data', (d) => {
    output += d;
  });
  const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
  const early = await Promise.race([ready.then(() => null), exited]);
  if (early) throw new Error(`saver exited before it was ready: ${output}`);
  return { child, exited, output: () => output };
}

it('keeps a session loadable, and every acknowledged save in it, when processes save it at once', async () => {
  const processes = 3;
  const saves = 25;
  const store = new FileSessionStore(dir);
  const start = AgentState.empty().withUserMessage('go').withExecutionStarted();
  await store.save('shared', start, null);
  const savers = await Promise.all(
    Array.from({ length: processes }, (_, i) => startSaver([dir, 'shared', String(i * 1000), String(saves)])),
  );
  for (const saver of savers) saver.child.stdin?.end('go\n');
  for (const saver of savers) {
    const [code] = await saver.exited;
    expect(code, saver.output()).toBe(0);
  }

  const loaded = await store.load('shared');
  expect(loaded?.version).toBe(1 + processes * saves);
  const acknowledged = savers.flatMap((saver) =>
    [...saver.output().matchAll(/^saved (\d+) (\d+)$/gm)].map((m) => ({
      version: Number(m[1]),
      marker: Number(m[2]),
    })),
  );
  expect(acknowledged).toHaveLength(processes * saves);
  expect(new Set(acknowledged.map((a) => a.version)).size).toBe(processes * saves);
  // Each acknowledged save is the checkpoint at its version: its step is the last one there.
  for (const { version, marker } of acknowledged) {
    const checkpoint = await store.loadCheckpoint('shared', version);
    expect(checkpoint?.state.steps().at(-1)?.toolExecutions()[0]?.toolCallId()).toBe(`call-${marker}`);
  }
  await store.close();
}, 120_000);

describe('the lock file of a session (<dir>/<id>.journal.lock)', () => {
  const lockOf = (id: string) => join(dir, `${id}.journal.lock`);
  const bootId = () => {
    try {
      return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    } catch {
      return '';
    }
  };

  it('is there only while a save runs, with lockHoldMs 0', async () => {
    const store = new FileSessionStore(dir, { lockHoldMs: 0 });
    await store.save('s', AgentState.empty(), null);
    expect(await readdir(dir)).toEqual(['s.journal']);
    await store.close();
  });

  it('is kept across the saves of a session for lockHoldMs, and removed at close', async () => {
    const store = new FileSessionStore(dir, { lockHoldMs: 60_000 });
    await store.save('s', AgentState.empty(), null);
    const taken = await stat(lockOf('s'));
    expect(await store.save('s', AgentState.empty().withUserMessage('again'), 1)).toBe(2);
    expect(await store.save('s', AgentState.empty().withUserMessage('and again'), 2)).toBe(3);
    // The same lock file, not one made again for each save.
    expect((await stat(lockOf('s'))).ino).toBe(taken.ino);
    expect((await stat(lockOf('s'))).mtimeMs).toBe(taken.mtimeMs);
    await store.close();
    expect(await readdir(dir)).toEqual(['s.journal']);
  });

  it('kept by a store, makes another process wait, then lets it save once the store is closed', async () => {
    const store = new FileSessionStore(dir, { lockHoldMs: 60_000 });
    await store.save('s', AgentState.empty().withUserMessage('go').withExecutionStarted(), null);
    const blocked = await startSaver([dir, 's', '0', '1', '100']);
    blocked.child.stdin?.end('go\n');
    const [code] = await blocked.exited;
    expect(code).not.toBe(0);
    expect(blocked.output()).toContain('SESSION_FILE_LOCKED');
    expect(blocked.output()).toContain(`process ${process.pid}`);

    await store.close();
    const saver = await startSaver([dir, 's', '0', '1', '100']);
    saver.child.stdin?.end('go\n');
    const [after] = await saver.exited;
    expect(after, saver.output()).toBe(0);
    expect(saver.output()).toContain('saved 2 0');
  }, 60_000);

  it('kept by a process killed with SIGKILL is taken over by the next save', async () => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', 'tests/persistence/support/durable-saver.ts', 'file', dir, 's', 'full', '600000'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    children.push(child);
    let output = '';
    const saved = new Promise<void>((resolve) => {
      child.stdout?.on('data', (d) => {
        output += d;
        if (/^saved 3$/m.test(output)) resolve();
      });
    });
    child.stderr?.on('data', (d) => {
      output += d;
    });
    const exited = once(child, 'exit');
    const early = await Promise.race([saved.then(() => null), exited]);
    if (early) throw new Error(`the saver exited before it was killed: ${output}`);
    child.kill('SIGKILL');
    await exited;
    // It kept the lock (10 minutes) and died with it.
    expect(JSON.parse(readFileSync(lockOf('s'), 'utf8'))).toMatchObject({ pid: child.pid });

    const store = new FileSessionStore(dir, { lockTimeoutMs: 60_000 });
    const loaded = await store.load('s');
    if (!loaded) throw new Error('the session is gone');
    expect(await store.save('s', loaded.state.withUserMessage('after'), loaded.version)).toBe(
      loaded.version + 1,
    );
    await store.close();
    expect(await readdir(dir)).toEqual(['s.journal']);
  }, 60_000);

  it.each([
    [
      'a process that is gone',
      async () => {
        const child = spawn(process.execPath, ['-e', '']);
        await once(child, 'exit');
        return JSON.stringify({ pid: child.pid, host: hostname(), boot: bootId(), token: 'gone' });
      },
    ],
    ['no holder (damaged text)', async () => 'not a holder'],
  ])('held by %s is taken over: the save goes on and removes it', async (_, text) => {
    const store = new FileSessionStore(dir);
    await store.save('s', AgentState.empty(), null);
    await writeFile(lockOf('s'), await text());
    expect(await store.save('s', AgentState.empty().withUserMessage('again'), 1)).toBe(2);
    await store.close();
    expect(await readdir(dir)).toEqual(['s.journal']);
  });

  it('held by a process of another machine makes the save wait, then raise SessionFileLockedError', async () => {
    const store = new FileSessionStore(dir, { lockTimeoutMs: 50 });
    await store.save('s', AgentState.empty(), null);
    const holder = { pid: 4242, host: 'another-machine', boot: '', token: 'theirs' };
    await writeFile(lockOf('s'), JSON.stringify(holder));
    const error = await store.save('s', AgentState.empty(), 1).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SessionFileLockedError);
    expect(error).toMatchObject({
      code: 'SESSION_FILE_LOCKED',
      lockFile: lockOf('s'),
      holder: { pid: 4242, host: 'another-machine' },
    });
    expect((error as Error).message).toContain('remove the lock file');
    expect((await store.load('s'))?.version).toBe(1);
    await store.close();
  });
});
