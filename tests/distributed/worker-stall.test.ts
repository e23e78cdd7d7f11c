import { randomUUID } from 'node:crypto';
import { appendFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgentClient } from '../../src/distributed/agent-client';
import { type AgentWorker, createAgentWorker } from '../../src/distributed/agent-worker';
import { RedisSessionStore } from '../../src/distributed/redis-session-store';
import { scriptedDriver } from '../../src/drivers/scripted-driver';
import { createAgent } from '../../src/runtime/create-agent';
import { AgentState } from '../../src/state/agent-state';
import { InvalidArgumentError } from '../../src/state/errors';
import { ExecutionStatus } from '../../src/state/execution-status';
import { defineTool } from '../../src/tools/define-tool';
import { readLedger } from './support/ledger-agent';
import { type RedisServer, startRedisServer } from './support/redis-server';
import { startWorkerProcess, type WorkerProcess } from './support/worker-processes';

/**
 * Longer than every renewal interval of the default timings (the session lock renews every 2 s,
 * BullMQ looks at its job locks every 2 s), shorter than what they are documented to tolerate (4 s).
 */
const BLOCK_MS = 3_000;

let server: RedisServer;
let dir: string;
const cleanups: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  server = await startRedisServer();
  dir = mkdtempSync(join(tmpdir(), 'agent-machine-stall-'));
}, 20_000);

afterAll(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
}, 30_000);

/** Blocks the event loop, as a long synchronous tool (or a starved CPU) does. */
function blockEventLoop(ms: number): void {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    // busy: no timer, no I/O callback of this process runs meanwhile
  }
}

describe('a live worker whose event loop is blocked (default timings)', () => {
  it('keeps its job: not stalled, taken by no other worker, each tool call once', async () => {
    const queueName = `stall-${randomUUID()}`;
    const ledger = join(dir, `${queueName}.ledger`);
    const connection = server.connection;
    const store = new RedisSessionStore({ connection, prefix: `${queueName}:` });
    cleanups.push(() => store.close());

    let entered!: () => void;
    const toolEntered = new Promise<void>((resolve) => {
      entered = resolve;
    });
    let open!: () => void;
    const gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    const block = defineTool({
      description: 'Runs long, synchronously',
      inputSchema: z.object({}),
      execute: async (_args, { toolCallId }) => {
        appendFileSync(ledger, `blocked ${queueName} ${toolCallId}\n`);
        entered();
        await gate;
        blockEventLoop(BLOCK_MS);
        return 'done blocking';
      },
    });
    const agent = createAgent({
      driver: scriptedDriver([{ toolCalls: [{ name: 'block', args: {}, id: 'block-1' }] }, { text: 'done' }]),
      tools: { block },
    });
    // The timing options are left out: the defaults are under test.
    const worker: AgentWorker = await createAgentWorker({
      agents: { blocker: agent },
      store,
      connection,
      queueName,
      id: 'blocked',
    });
    cleanups.push(() => worker.close());
    const client = await createAgentClient({ connection, queueName });
    cleanups.push(() => client.close());

    const job = await client.execute({
      agent: 'blocker',
      sessionId: 'blocked-session',
      state: AgentState.empty().withUserMessage('block'),
    });
    await toolEntered;
    // Another worker of the pool, started once the job is taken (so it cannot take it first): it
    // looks for stalled jobs while this process is blocked. It knows no `blocker` agent, so a job
    // it took over would fail with UnknownAgentError.
    const other: WorkerProcess = await startWorkerProcess({
      port: server.port,
      queueName,
      storePrefix: `${queueName}:`,
      ledger,
      tag: 'other',
      concurrency: 1,
      modelDelayMs: 0,
      toolDelayMs: 0,
    });
    cleanups.push(() => other.kill());
    open();

    const result = await job.finished({ timeoutMs: 60_000 });
    expect(result.workerId).toBe('blocked');
    expect(result.status).toBe(ExecutionStatus.Completed);
    expect(result.state.finalResponse()).toBe('done');
    expect(result.state.stepCount()).toBe(2);
    expect(readLedger(ledger)).toEqual([{ worker: 'blocked', session: queueName, callId: 'block-1' }]);
    const queue = new Queue(queueName, { connection });
    cleanups.push(() => queue.close());
    expect((await queue.getJob(job.id))?.stalledCounter).toBe(0);
  }, 90_000);
});

describe('timing options', () => {
  it.each([
    ['lockDurationMs', { lockDurationMs: 0 }],
    ['stalledIntervalMs', { stalledIntervalMs: 1.5 }],
    ['sessionLockTtlMs', { sessionLockTtlMs: 50 }],
    ['busyRetryDelayMs', { busyRetryDelayMs: -1 }],
    ['maxStalledCount', { maxStalledCount: -1 }],
  ])('refuses a bad %s with InvalidArgumentError naming it', async (name, bad) => {
    const store = new RedisSessionStore({ connection: server.connection });
    cleanups.push(() => store.close());
    const attempt = createAgentWorker({
      agents: { a: createAgent({ driver: scriptedDriver([{ text: 'x' }]) }) },
      store,
      connection: server.connection,
      ...bad,
    });
    await expect(attempt).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(attempt).rejects.toThrow(name);
  });
});
