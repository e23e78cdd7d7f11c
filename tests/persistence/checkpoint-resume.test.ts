import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { scriptedDriver } from '../../src/drivers/scripted-driver';
import { NoSessionStoreError, SessionNotFoundError } from '../../src/persistence/errors';
import { FileSessionStore } from '../../src/persistence/file-session-store';
import { InMemorySessionStore } from '../../src/persistence/in-memory-session-store';
import type { SessionStore } from '../../src/persistence/session-store';
import { SqliteSessionStore } from '../../src/persistence/sqlite-session-store';
import { createAgent } from '../../src/runtime/create-agent';
import { AgentState } from '../../src/state/agent-state';
import { ExecutionStatus } from '../../src/state/execution-status';
import { add, addCall } from '../support/agents';
import { DURABLE_STEPS, durableAgent } from '../support/durable-agent';

const dirs: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'agent-machine-'));
  dirs.push(dir);
  return dir;
};
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A store that remembers the step count of every state it was asked to save. */
function spying(store: SessionStore) {
  const saved: number[] = [];
  const spy: SessionStore = {
    load: (id) => store.load(id),
    save: async (id, state, version) => {
      const next = await store.save(id, state, version);
      saved.push(state.stepCount());
      return next;
    },
    delete: (id) => store.delete(id),
    list: () => store.list(),
    close: () => store.close(),
  };
  return { spy, saved };
}

const question = () => AgentState.empty().withUserMessage('What is 2 + 3?');
const threeSteps = () =>
  scriptedDriver([{ toolCalls: [addCall()] }, { toolCalls: [addCall(1, 1)] }, { text: '5' }]);

describe('checkpoints', () => {
  it('saves the started execution, every recorded step and the end', async () => {
    const { spy, saved } = spying(new InMemorySessionStore());
    const agent = createAgent({ driver: threeSteps(), tools: { add }, store: spy });
    const state = await agent.execute(question(), { sessionId: 'chat-1' });
    expect(saved).toEqual([0, 1, 2, 3, 3]);
    const stored = await spy.load('chat-1');
    expect(stored?.version).toBe(5);
    expect(stored?.state.toJSON()).toEqual(state.toJSON());
    expect(stored?.state.status()).toBe(ExecutionStatus.Completed);
  });

  it('continues an existing session from its stored version, as the next execution', async () => {
    const store = new InMemorySessionStore();
    const agent = createAgent({ driver: scriptedDriver([{ text: 'one' }, { text: 'two' }]), store });
    const first = await agent.execute(question(), { sessionId: 's' });
    const second = await agent.execute(first.withUserMessage('again'), { sessionId: 's' });
    expect(second.executionCount()).toBe(2);
    expect((await store.load('s'))?.version).toBe(6);
  });

  it('chat() runs one turn of a stored conversation per message', async () => {
    const store = new InMemorySessionStore();
    const agent = createAgent({ driver: scriptedDriver([{ text: 'Hello!' }, { text: 'Bye!' }]), store });
    await agent.chat('c-1', 'Hi');
    const second = await agent.chat('c-1', 'Goodbye');
    expect(second.executionCount()).toBe(2);
    expect(second.messages().map((m) => m.content)).toEqual(['Hi', 'Hello!', 'Goodbye', 'Bye!']);
    expect((await store.load('c-1'))?.state.finalResponse()).toBe('Bye!');
  });

  it('fails the run with SessionConflictError when another writer saved the session meanwhile', async () => {
    const store = new InMemorySessionStore();
    let intruded = false;
    const agent = createAgent({
      driver: scriptedDriver([{ toolCalls: [addCall()] }, { text: '5' }]),
      tools: { add },
      store,
      hooks: [
        {
          afterStep: async () => {
            if (intruded) return undefined;
            intruded = true;
            const current = await store.load('c');
            await store.save(
              'c',
              AgentState.empty().withUserMessage('someone else'),
              current?.version ?? null,
            );
            return undefined;
          },
        },
      ],
    });
    const state = await agent.execute(question(), { sessionId: 'c' });
    expect(state.status()).toBe(ExecutionStatus.Failed);
    expect(state.errors().at(-1)).toMatchObject({ name: 'SessionConflictError', code: 'SESSION_CONFLICT' });
    expect((await store.load('c'))?.state.messages()[0]?.content).toBe('someone else');
  });

  it('refuses session operations without a store, and resume of an unknown session, with typed errors', async () => {
    const agent = createAgent({ driver: threeSteps(), tools: { add } });
    await expect(agent.execute(question(), { sessionId: 'x' })).rejects.toBeInstanceOf(NoSessionStoreError);
    await expect(agent.resume('x')).rejects.toBeInstanceOf(NoSessionStoreError);
    const stored = createAgent({ driver: threeSteps(), tools: { add }, store: new InMemorySessionStore() });
    await expect(stored.resume('nobody')).rejects.toBeInstanceOf(SessionNotFoundError);
    // decide() of a missing session names the session, not resume (it said "nothing to resume")
    const missing = await stored.decide('nobody', [{ toolCallId: 't1', type: 'approve' }]).catch((e) => e);
    expect(missing).toBeInstanceOf(SessionNotFoundError);
    expect(missing.message).toBe('Session "nobody" does not exist in the store.');
    await expect(stored.execute(question(), { sessionId: '../x' })).rejects.toMatchObject({
      code: 'INVALID_SESSION_ID',
    });
  });

  it('returns a finished session unchanged from resume', async () => {
    const store = new InMemorySessionStore();
    const agent = createAgent({ driver: threeSteps(), tools: { add }, store });
    const done = await agent.execute(question(), { sessionId: 'f' });
    expect((await agent.resume('f')).toJSON()).toEqual(done.toJSON());
  });
});

describe.each([
  ['file', (dir: string) => join(dir, 'sessions'), (path: string) => new FileSessionStore(path)],
  ['sqlite', (dir: string) => join(dir, 'agents.db'), (path: string) => new SqliteSessionStore(path)],
] as const)('a process killed mid-step (%s store)', (kind, storePath, open) => {
  it('resumes from the last checkpoint: earlier steps intact, no tool executed twice', async () => {
    const dir = tempDir();
    const path = storePath(dir);
    const ledger = join(dir, 'ledger.txt');
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', 'tests/support/crash-run.ts', kind, path, 'job-1', ledger],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    const exited = new Promise<NodeJS.Signals | null>((resolve) =>
      child.on('exit', (_code, signal) => resolve(signal)),
    );

    // Wait until the child has recorded two steps and is in the third step's (slow) model call.
    const watcher = open(path);
    await vi.waitUntil(
      async () => {
        if (child.exitCode !== null) throw new Error(`the child exited early: ${output}`);
        return ((await watcher.load('job-1'))?.state.stepCount() ?? 0) === 2;
      },
      { timeout: 15_000, interval: 25 },
    );
    await watcher.close();
    child.kill('SIGKILL');
    expect(await exited).toBe('SIGKILL');
    const beforeResume = readFileSync(ledger, 'utf8').trim().split('\n');
    expect(beforeResume).toEqual(['call-1', 'call-2']);

    const store = open(path);
    const checkpoint = await store.load('job-1');
    const agent = durableAgent(store, ledger);
    const state = await agent.resume('job-1');
    await store.close();

    expect(state.status()).toBe(ExecutionStatus.Completed);
    expect(state.finalResponse()).toBe('all recorded');
    expect(state.stepCount()).toBe(DURABLE_STEPS);
    expect(
      state
        .steps()
        .slice(0, 2)
        .map((s) => s.id()),
    ).toEqual(checkpoint?.state.steps().map((s) => s.id()));
    expect(state.executionId()).toBe(checkpoint?.state.executionId());
    expect(state.executionCount()).toBe(1);
    expect(readFileSync(ledger, 'utf8').trim().split('\n')).toEqual(['call-1', 'call-2', 'call-3', 'call-4']);
  });
});
