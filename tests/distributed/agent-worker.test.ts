import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Job, Queue, QueueEvents } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import {
  AgentJobFailedError,
  AgentJobTimeoutError,
  type AgentStepProgress,
  type AgentWorker,
  type AgentWorkerOptions,
  createAgentClient,
  createAgentWorker,
  InvalidJobPayloadError,
  JOB_METADATA_KEY,
  RedisSessionStore,
} from '../../src/distributed/index';
import { scriptedDriver } from '../../src/drivers/scripted-driver';
import type { Hook } from '../../src/hooks/hook';
import type { SessionStore } from '../../src/persistence/session-store';
import type { Agent } from '../../src/runtime/agent-actor';
import { createAgent } from '../../src/runtime/create-agent';
import type { AgentState } from '../../src/state/agent-state';
import { ExecutionStatus } from '../../src/state/execution-status';
import { defineTool } from '../../src/tools/define-tool';
import {
  LEDGER_ANSWER,
  LEDGER_STEPS,
  LEDGER_TOOL_STEPS,
  ledgerAgent,
  ledgerState,
  readLedger,
} from './support/ledger-agent';
import { type RedisServer, startRedisServer } from './support/redis-server';

let server: RedisServer;
let dir: string;
const cleanups: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  server = await startRedisServer();
  dir = mkdtempSync(join(tmpdir(), 'agent-machine-worker-'));
}, 20_000);

afterEach(async () => {
  // Workers first (they use the store), then clients, stores and connections.
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
}, 20_000);

afterAll(async () => {
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

interface WorkerSetup extends Partial<AgentWorkerOptions> {
  readonly modelDelayMs?: number;
  readonly toolDelayMs?: number;
}

/** A queue, a store and a client of their own for one test, with direct access to Redis and BullMQ. */
async function setup() {
  const queueName = `q-${randomUUID()}`;
  const ledger = join(dir, `${queueName}.ledger`);
  const connection = server.connection;
  const store = new RedisSessionStore({ connection, prefix: `${queueName}:` });
  cleanups.push(() => store.close());
  const raw = new Redis(connection);
  cleanups.push(() => raw.quit());
  const queue = new Queue(queueName, { connection });
  cleanups.push(() => queue.close());
  const events = new QueueEvents(queueName, { connection });
  cleanups.push(() => events.close());
  await events.waitUntilReady();
  const client = await createAgentClient({
    connection,
    queueName,
    jobOptions: { attempts: 3, backoff: { type: 'fixed', delay: 50 } },
  });
  cleanups.push(() => client.close());
  const sessionLockPrefix = `${queueName}:lock:`;

  const startWorker = async (options: WorkerSetup = {}): Promise<AgentWorker> => {
    const { modelDelayMs, toolDelayMs, ...rest } = options;
    const worker = await createAgentWorker({
      agents: {
        ledger: () => ledgerAgent({ ledger, workerTag: options.id ?? 'worker', modelDelayMs, toolDelayMs }),
      },
      store,
      connection,
      queueName,
      busyRetryDelayMs: 50,
      sessionLockPrefix,
      ...rest,
    });
    cleanups.push(() => worker.close());
    return worker;
  };

  /** Adds a job as anyone could (no client-side validation) and waits for its end. */
  const rawJob = async (name: string, data: unknown) => {
    const job = await queue.add(name, data, { attempts: 3 });
    const reason = await job.waitUntilFinished(events, 10_000).then(
      () => 'completed',
      (error: Error) => error.message,
    );
    const after = (await Job.fromId(queue, job.id as string)) as Job;
    return { reason, attemptsMade: after.attemptsMade };
  };

  return {
    queueName,
    ledger,
    store,
    raw,
    queue,
    client,
    startWorker,
    rawJob,
    lockKey: (sessionId: string) => `${sessionLockPrefix}{${sessionId}}`,
    jobState: async (id: string) => (await Job.fromId(queue, id))?.getState(),
  };
}

/** `{ a: { a: ... 1 } }`, `levels` objects deep. */
const nestedObject = (levels: number): unknown =>
  JSON.parse(`${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`);
/** An empty state's JSON with `value` as its metadata `x`. */
const stateWithMetadata = (value: unknown) => {
  const json = JSON.parse(JSON.stringify(ledgerState('s')));
  json.context.metadata.x = value;
  return json;
};

const callsOf = (sessionId: string, upTo = LEDGER_TOOL_STEPS) =>
  Array.from({ length: upTo }, (_, i) => `${sessionId}-call-${i + 1}`);

describe('execute and resume jobs', () => {
  it('runs an execute job: the final state to the client, each step as progress in order, the state in the store', async () => {
    const { client, store, startWorker, ledger } = await setup();
    const worker = await startWorker({ id: 'solo' });
    const progress: AgentStepProgress[] = [];
    const job = await client.execute(
      { agent: 'ledger', sessionId: 'one', state: ledgerState('one') },
      { onProgress: (p) => progress.push(p) },
    );
    expect(job).toMatchObject({ name: 'execute', agent: 'ledger', sessionId: 'one' });
    const result = await job.finished({ timeoutMs: 10_000 });

    expect(result.status).toBe(ExecutionStatus.Completed);
    expect(result.state.finalResponse()).toBe(LEDGER_ANSWER);
    expect(result.state.stepCount()).toBe(LEDGER_STEPS);
    expect(result.workerId).toBe(worker.id);
    expect(result.state.metadata()[JOB_METADATA_KEY]).toBe(`${client.queueName}/${job.id}`);
    const stored = await store.load('one');
    expect(stored?.version).toBe(result.version);
    expect(stored?.state.toJSON()).toEqual(result.state.toJSON());

    // Progress events precede the completion on the event stream: all of them are in.
    expect(progress.map((p) => p.stepNumber)).toEqual([1, 2, 3, 4, 5]);
    expect(progress.map((p) => p.stepType)).toEqual([
      'tool_execution',
      'tool_execution',
      'tool_execution',
      'tool_execution',
      'final_response',
    ]);
    for (const p of progress) {
      expect(p).toMatchObject({
        type: 'step.finished',
        sessionId: 'one',
        agent: 'ledger',
        workerId: 'solo',
        executionId: result.state.executionId(),
        errors: [],
      });
      expect(p.usage.totalTokens).toBe(12);
    }
    expect(progress.map((p) => p.stepId)).toEqual(result.state.stepExecutions().map((s) => s.id()));
    expect(readLedger(ledger).map((l) => l.callId)).toEqual(callsOf('one'));
  });

  it("reports the root agent's steps as progress, not its subagents'", async () => {
    const { client, startWorker } = await setup();
    const helper = { description: 'Helps', driver: scriptedDriver([{ text: 'helped' }]) };
    const withHelper = createAgent({
      driver: scriptedDriver([
        { toolCalls: [{ name: 'helper', args: { task: 'help' }, id: 'help-1' }] },
        { text: 'done' },
      ]),
      subagents: { agents: { helper } },
    });
    await startWorker({ id: 'solo', agents: { withHelper } });
    const progress: AgentStepProgress[] = [];
    const job = await client.execute(
      { agent: 'withHelper', sessionId: 'sub', message: 'go' },
      { onProgress: (p) => progress.push(p) },
    );
    const result = await job.finished({ timeoutMs: 10_000 });
    expect(result.state.finalResponse()).toBe('done');
    expect(progress.map((p) => [p.stepNumber, p.stepType])).toEqual([
      [1, 'tool_execution'],
      [2, 'final_response'],
    ]);
    expect(progress.map((p) => p.stepId)).toEqual(result.state.stepExecutions().map((s) => s.id()));
  });

  it('an execute job with only a message continues the stored session (multi-turn)', async () => {
    const { client, startWorker } = await setup();
    const echo = (state: AgentState) => ({
      text: `echo: ${
        state
          .messages()
          .filter((m) => m.role === 'user')
          .at(-1)?.content
      }`,
    });
    await startWorker({ agents: { chat: () => createAgent({ driver: scriptedDriver([echo]) }) } });
    const first = await (
      await client.execute({ agent: 'chat', sessionId: 'chat', message: 'hello' })
    ).finished();
    expect(first.state.finalResponse()).toBe('echo: hello');
    const second = await (
      await client.execute({ agent: 'chat', sessionId: 'chat', message: 'again' })
    ).finished();
    expect(second.state.finalResponse()).toBe('echo: again');
    expect(second.state.executionCount()).toBe(2);
    expect(second.state.messages().map((m) => m.content)).toEqual([
      'hello',
      'echo: hello',
      'again',
      'echo: again',
    ]);
  });

  it('a resume job continues a checkpointed session without repeating its completed tool calls', async () => {
    const { client, store, startWorker, ledger } = await setup();
    // A process that "dies" after checkpointing two steps: its third save never returns.
    const dying: SessionStore = {
      load: (id) => store.load(id),
      save: async (id, state, version) => {
        const saved = await store.save(id, state, version);
        return state.stepCount() === 2 ? new Promise<number>(() => {}) : saved;
      },
      delete: (id) => store.delete(id),
      list: () => store.list(),
      close: async () => {},
    };
    const crashed = createAgent({
      ...ledgerAgent({ ledger, workerTag: 'crashed' }).definition,
      store: dying,
    });
    void crashed.execute(ledgerState('r'), { sessionId: 'r' });
    await vi.waitUntil(async () => (await store.load('r'))?.state.stepCount() === 2, { timeout: 5_000 });
    const checkpoint = await store.load('r');

    await startWorker({ id: 'rescuer' });
    const result = await (await client.resume({ agent: 'ledger', sessionId: 'r' })).finished({
      timeoutMs: 10_000,
    });
    expect(result.status).toBe(ExecutionStatus.Completed);
    expect(result.state.stepCount()).toBe(LEDGER_STEPS);
    expect(result.state.executionId()).toBe(checkpoint?.state.executionId());
    expect(
      result.state
        .stepExecutions()
        .slice(0, 2)
        .map((s) => s.id()),
    ).toEqual(checkpoint?.state.stepExecutions().map((s) => s.id()));
    expect(readLedger(ledger).map((l) => `${l.worker} ${l.callId}`)).toEqual([
      'crashed r-call-1',
      'crashed r-call-2',
      'rescuer r-call-3',
      'rescuer r-call-4',
    ]);

    // A resume of a finished session returns it as it is.
    const again = await (await client.resume({ agent: 'ledger', sessionId: 'r' })).finished();
    expect(again.state.toJSON()).toEqual(result.state.toJSON());
    expect(again.version).toBe(result.version);
    expect(readLedger(ledger)).toHaveLength(4);
  });
});

describe('bad input', () => {
  it('fails bad jobs with typed errors (name and code in the failed reason), at once; other jobs go on', async () => {
    const { client, startWorker, rawJob, queue } = await setup();
    await startWorker();
    const good = await client.execute({ agent: 'ledger', sessionId: 'good', state: ledgerState('good') });

    const cases: [string, unknown, RegExp][] = [
      [
        'explode',
        { agent: 'ledger', sessionId: 's' },
        /^InvalidJobPayloadError \[INVALID_JOB_PAYLOAD\]: .* at name: "explode"/,
      ],
      ['execute', 'not an object', /\[INVALID_JOB_PAYLOAD\]: Invalid agent job at data: /],
      [
        'execute',
        { agent: 'ledger', message: 'x' },
        /\[INVALID_JOB_PAYLOAD\]: Invalid agent job at data\.sessionId/,
      ],
      [
        'execute',
        { agent: 'ledger', sessionId: '../etc', message: 'x' },
        /at data\.sessionId: not a valid session id/,
      ],
      [
        'execute',
        { agent: 'ledger', sessionId: 's' },
        /at data: an execute job needs a state, a message, or both/,
      ],
      [
        'execute',
        { agent: 'ledger', sessionId: 's', message: 'x', extra: 1 },
        /\[INVALID_JOB_PAYLOAD\].*"extra"/,
      ],
      [
        'execute',
        { agent: 'ledger', sessionId: 's', state: { agentId: 7 } },
        /at data\.state\.\w+: Invalid AgentState/,
      ],
      [
        'execute',
        { agent: 'ledger', sessionId: 's', state: stateWithMetadata(nestedObject(600)) },
        /\[INVALID_JOB_PAYLOAD\].*at data\.state\.context\.metadata\.x.*nested more than 512 levels deep/,
      ],
      [
        'execute',
        { agent: 'ledger', sessionId: 's', state: stateWithMetadata(nestedObject(300)) },
        /\[INVALID_JOB_PAYLOAD\].*at data\.state\.context\.metadata\.x.*nested more than 256 levels deep/,
      ],
      [
        'resume',
        { agent: 'ledger', sessionId: 'nobody' },
        /^SessionNotFoundError \[SESSION_NOT_FOUND\]: Session "nobody"/,
      ],
      [
        'execute',
        { agent: 'nope', sessionId: 's', message: 'x' },
        /^UnknownAgentError \[UNKNOWN_AGENT\]: No agent named "nope" .*\(registered: "ledger"\)/,
      ],
    ];
    for (const [name, data, reason] of cases) {
      const outcome = await rawJob(name, data);
      expect(outcome.reason, `${name} ${JSON.stringify(data)}`).toMatch(reason);
      expect(outcome.attemptsMade).toBe(1); // not retried
    }

    // Through the client: the failure as a typed error.
    const unknown = await client.execute({ agent: 'nope', sessionId: 'x', message: 'hi' });
    const error = await unknown.finished().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AgentJobFailedError);
    expect(error).toMatchObject({
      code: 'AGENT_JOB_FAILED',
      errorName: 'UnknownAgentError',
      errorCode: 'UNKNOWN_AGENT',
      jobId: unknown.id,
      sessionId: 'x',
    });
    const missing = await client.resume({ agent: 'ledger', sessionId: 'ghost' });
    await expect(missing.finished()).rejects.toMatchObject({ errorCode: 'SESSION_NOT_FOUND' });

    // The client refuses bad requests before they reach the queue.
    const before = await queue.count();
    await expect(client.execute({ agent: 'ledger', sessionId: 'a/b', message: 'x' })).rejects.toBeInstanceOf(
      InvalidJobPayloadError,
    );
    await expect(client.execute({ agent: 'ledger', sessionId: 's' })).rejects.toMatchObject({
      code: 'INVALID_JOB_PAYLOAD',
      path: 'data',
    });
    await expect(
      client.execute({ agent: 'ledger', sessionId: 's', state: { not: 'a state' } as never }),
    ).rejects.toMatchObject({ path: 'data.state' });
    await expect(client.resume({ agent: '', sessionId: 's' })).rejects.toMatchObject({ path: 'data.agent' });
    expect(await queue.count()).toBe(before);

    const done = await good.finished({ timeoutMs: 10_000 });
    expect(done.state.finalResponse()).toBe(LEDGER_ANSWER);
  });

  it('gives up waiting after timeoutMs with AgentJobTimeoutError (the job stays queued)', async () => {
    const { client, jobState } = await setup();
    const job = await client.execute({ agent: 'ledger', sessionId: 'later', message: 'hi' });
    const error = await job.finished({ timeoutMs: 100 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AgentJobTimeoutError);
    expect(error).toMatchObject({ code: 'AGENT_JOB_TIMEOUT', jobId: job.id, timeoutMs: 100 });
    expect(await jobState(job.id)).toBe('waiting');
  });
});

describe('hostile values', () => {
  it('a tool result with an own __proto__ key: the job result and the session’s next job keep it as data', async () => {
    const { client, store, startWorker } = await setup();
    const thirdParty = defineTool({
      description: 'Returns third-party JSON',
      inputSchema: z.object({}),
      execute: async () => JSON.parse('{"__proto__":{"admin":true},"ok":1}'),
    });
    const protoAgent = () =>
      createAgent({
        driver: scriptedDriver([
          { toolCalls: [{ id: 'p1', name: 'thirdParty', args: {} }] },
          { text: 'done' },
        ]),
        tools: { thirdParty },
        store,
      });
    await startWorker({ id: 'proto', agents: { proto: protoAgent } });
    const first = await (
      await client.execute({ agent: 'proto', sessionId: 'proto', message: 'go' })
    ).finished({
      timeoutMs: 10_000,
    });
    const ownProto = (state: AgentState) =>
      Object.getOwnPropertyDescriptor(state.steps()[0]?.toolExecutions()[0]?.value(), '__proto__')?.value;
    expect(first.status).toBe(ExecutionStatus.Completed);
    expect(ownProto(first.state)).toEqual({ admin: true });
    // The next job of the session loads the stored state (the first execution with it) and runs on.
    const next = await (
      await client.execute({ agent: 'proto', sessionId: 'proto', message: 'again' })
    ).finished({
      timeoutMs: 10_000,
    });
    expect(next.status).toBe(ExecutionStatus.Completed);
    expect(next.state.executionCount()).toBe(2);
    expect(next.state.messages().find((m) => m.role === 'tool')?.content).toBe(
      '{"__proto__":{"admin":true},"ok":1}',
    );
    expect(({} as Record<string, unknown>).admin).toBeUndefined();
  });
});

describe('one session, one worker at a time', () => {
  it('never interleaves two jobs of one session, across workers and concurrency', async () => {
    const { client, store, startWorker } = await setup();
    const trace: string[] = [];
    const mark = defineTool({
      description: 'Marks the execution',
      inputSchema: z.object({}),
      execute: async (_input, { state }) => {
        trace.push(state.executionId() as string);
        await new Promise((resolve) => setTimeout(resolve, 10));
        trace.push(state.executionId() as string);
        return 'marked';
      },
    });
    const turns = (): Agent =>
      createAgent({
        driver: scriptedDriver([
          (state) =>
            state.stepCount() < 2
              ? { toolCalls: [{ name: 'mark', args: {}, id: `${state.executionId()}-${state.stepCount()}` }] }
              : { text: 'done' },
        ]),
        tools: { mark },
      });
    await startWorker({ id: 'a', concurrency: 3, agents: { turns } });
    await startWorker({ id: 'b', concurrency: 3, agents: { turns } });

    const jobs = await Promise.all(
      ['m0', 'm1', 'm2', 'm3'].map((message) =>
        client.execute({ agent: 'turns', sessionId: 'shared', message }),
      ),
    );
    const results = await Promise.all(jobs.map((job) => job.finished({ timeoutMs: 15_000 })));

    // Each execution's marks form one block: no other execution ran in between.
    const blocks = trace.filter((id, i) => i === 0 || trace[i - 1] !== id);
    expect(blocks).toHaveLength(4);
    expect(new Set(blocks).size).toBe(4);
    expect(trace).toHaveLength(4 * 2 * 2);
    expect(results.map((r) => r.state.executionCount()).sort()).toEqual([1, 2, 3, 4]);
    const stored = await store.load('shared');
    expect(stored?.state.executionCount()).toBe(4);
    expect(
      stored?.state
        .messages()
        .filter((m) => m.role === 'user')
        .map((m) => m.content)
        .sort(),
    ).toEqual(['m0', 'm1', 'm2', 'm3']);
  });

  it('waits while the stored execution belongs to another unfinished job, then runs after it', async () => {
    const { client, store, startWorker, queue, queueName, jobState, ledger } = await setup();
    await startWorker({ id: 'w', concurrency: 2 });
    // Job A started the session's execution (its mark is stored) and is back in the queue, due
    // much later: as a job whose worker died looks until BullMQ hands it on.
    const a = await client.execute(
      { agent: 'ledger', sessionId: 'owned', state: ledgerState('owned') },
      { job: { delay: 60_000 } },
    );
    const started = ledgerState('owned')
      .withExecutionStarted()
      .withMetadata(JOB_METADATA_KEY, `${queueName}/${a.id}`);
    await store.save('owned', started, null);

    const b = await client.execute({ agent: 'ledger', sessionId: 'owned', message: 'and then?' });
    await vi.waitUntil(async () => (await jobState(b.id)) === 'delayed', { timeout: 5_000, interval: 10 });
    expect((await store.load('owned'))?.version).toBe(1); // B waited: it did not touch the session
    await ((await Job.fromId(queue, a.id)) as Job).promote();

    const first = await a.finished({ timeoutMs: 10_000 });
    const second = await b.finished({ timeoutMs: 10_000 });
    expect(first.state.executionCount()).toBe(1);
    expect(first.state.finalResponse()).toBe(LEDGER_ANSWER);
    expect(second.state.executionCount()).toBe(2);
    expect(
      second.state
        .messages()
        .filter((m) => m.role === 'user')
        .map((m) => m.content),
    ).toEqual(['Record four things', 'and then?']);
    expect(readLedger(ledger).map((l) => l.callId)).toEqual(callsOf('owned'));
  });

  it('waits for a lock left by a dead worker until it expires, then runs', async () => {
    const { client, store, startWorker, raw, lockKey, jobState } = await setup();
    await startWorker();
    await raw.set(lockKey('held'), 'dead-worker/job-0/token');
    const job = await client.execute({ agent: 'ledger', sessionId: 'held', state: ledgerState('held') });
    await vi.waitUntil(async () => (await jobState(job.id)) === 'delayed', { timeout: 5_000, interval: 10 });
    expect(await store.load('held')).toBeNull(); // it waited: nothing ran
    await raw.pexpire(lockKey('held'), 1); // the dead worker's lock runs out
    const result = await job.finished({ timeoutMs: 10_000 });
    expect(result.status).toBe(ExecutionStatus.Completed);
    expect(await raw.exists(lockKey('held'))).toBe(0); // released at the end
  });

  it("refuses a job for a busy session with SessionBusyError when whenSessionBusy is 'fail'", async () => {
    const { client, startWorker, raw, lockKey } = await setup();
    await startWorker({ whenSessionBusy: 'fail' });
    await raw.set(lockKey('busy'), 'other-worker/job-1/token', 'PX', 60_000);
    const job = await client.execute({ agent: 'ledger', sessionId: 'busy', message: 'hi' });
    await expect(job.finished({ timeoutMs: 10_000 })).rejects.toMatchObject({
      errorName: 'SessionBusyError',
      errorCode: 'SESSION_BUSY',
    });
  });

  it('stops a run whose session lock was lost, fails the attempt with SESSION_LOCK_LOST, and the retry resumes', async () => {
    const { client, startWorker, raw, lockKey, ledger, queue } = await setup();
    await startWorker({ id: 'w', sessionLockTtlMs: 300, modelDelayMs: 40, toolDelayMs: 40 });
    const progress: AgentStepProgress[] = [];
    const job = await client.execute(
      { agent: 'ledger', sessionId: 'lost', state: ledgerState('lost') },
      { onProgress: (p) => progress.push(p) },
    );
    await vi.waitUntil(() => progress.length >= 2, { timeout: 10_000, interval: 5 });
    await raw.del(lockKey('lost')); // as if it had expired and another worker had taken it
    const result = await job.finished({ timeoutMs: 15_000 });

    expect(result.status).toBe(ExecutionStatus.Completed);
    expect(result.state.stepCount()).toBe(LEDGER_STEPS);
    const failedAttempts = ((await Job.fromId(queue, job.id)) as Job).stacktrace;
    expect((failedAttempts ?? []).join('\n')).toContain('SessionLockLostError [SESSION_LOCK_LOST]');
    // Checkpointed calls were not repeated; only a call in flight at the loss may have run twice.
    const calls = readLedger(ledger).map((l) => l.callId);
    expect(new Set(calls)).toEqual(new Set(callsOf('lost')));
    expect(calls.length).toBeLessThanOrEqual(LEDGER_TOOL_STEPS + 1);
  });
});

describe('graceful close', () => {
  it('lets the current step finish, checkpoints it, releases the job; another worker resumes it', async () => {
    const { client, store, startWorker, ledger, queueName, jobState } = await setup();
    let closing: Promise<void> | null = null;
    let first: AgentWorker | null = null;
    // The close is asked for while step 2's tool call runs: that step must finish and be kept.
    const closeDuringStep2: Hook = {
      name: 'close-during-step-2',
      beforeToolUse: (_state, { toolCall }) => {
        if (toolCall.id === 'g-call-2') closing = (first as AgentWorker).close();
        return undefined;
      },
    };
    first = await startWorker({
      id: 'first',
      agents: {
        ledger: () =>
          createAgent({
            ...ledgerAgent({ ledger, workerTag: 'first', toolDelayMs: 50 }).definition,
            hooks: [closeDuringStep2],
          }),
      },
    });
    const job = await client.execute({ agent: 'ledger', sessionId: 'g', state: ledgerState('g') });
    await vi.waitUntil(() => closing !== null, { timeout: 10_000, interval: 5 });
    await closing;
    expect(first.running()).toBe(0);
    expect(await first.close()).toBeUndefined(); // twice is fine

    // Released at the step boundary: in progress, two steps, every call so far checkpointed.
    const checkpoint = await store.load('g');
    const steps = 2;
    expect(checkpoint?.state.status()).toBe(ExecutionStatus.InProgress);
    expect(checkpoint?.state.stepCount()).toBe(steps);
    expect(checkpoint?.state.metadata()[JOB_METADATA_KEY]).toBe(`${queueName}/${job.id}`);
    expect(readLedger(ledger).map((l) => l.callId)).toEqual(callsOf('g', steps));
    expect(await jobState(job.id)).toBe('waiting');

    await startWorker({ id: 'second' });
    const result = await job.finished({ timeoutMs: 10_000 });
    expect(result.workerId).toBe('second');
    expect(result.status).toBe(ExecutionStatus.Completed);
    expect(result.state.stepCount()).toBe(LEDGER_STEPS);
    expect(result.state.executionCount()).toBe(1);
    expect(result.state.executionId()).toBe(checkpoint?.state.executionId());
    expect(
      result.state
        .stepExecutions()
        .slice(0, steps)
        .map((s) => s.id()),
    ).toEqual(checkpoint?.state.stepExecutions().map((s) => s.id()));
    const lines = readLedger(ledger);
    expect(lines.map((l) => l.callId)).toEqual(callsOf('g'));
    expect(lines.map((l) => l.worker)).toEqual(['first', 'first', 'second', 'second']);
  });

  it('closes an idle worker; a closed worker takes no jobs', async () => {
    const { client, startWorker, jobState } = await setup();
    const worker = await startWorker();
    await worker.close();
    const job = await client.execute({ agent: 'ledger', sessionId: 'idle', message: 'hi' });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await jobState(job.id)).toBe('waiting');
  });
});
