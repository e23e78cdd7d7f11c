import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createAgentClient } from '../../src/distributed/agent-client';
import { type AgentStepProgress, JOB_METADATA_KEY } from '../../src/distributed/agent-job';
import { createAgentWorker } from '../../src/distributed/agent-worker';
import { AgentJobFailedError, InvalidJobPayloadError } from '../../src/distributed/errors';
import { RedisSessionStore } from '../../src/distributed/redis-session-store';
import { AgentState } from '../../src/state/agent-state';
import { ExecutionStatus } from '../../src/state/execution-status';
import { type RedisServer, startRedisServer } from '../distributed/support/redis-server';
import { nestedApprovalAgent } from '../support/nested-approval-agent';

const SECRET = 'worker pool secret';
let server: RedisServer;
let dir: string;
const cleanups: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  server = await startRedisServer();
  dir = mkdtempSync(join(tmpdir(), 'agent-machine-decide-'));
}, 20_000);

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
}, 20_000);

afterAll(async () => {
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** A queue, store, worker and client of their own; the worker runs the nested approval agent. */
async function setup() {
  const queueName = `q-${randomUUID()}`;
  const ledger = join(dir, `${queueName}.ledger`);
  const connection = server.connection;
  const store = new RedisSessionStore({ connection, prefix: `${queueName}:` });
  cleanups.push(() => store.close());
  const client = await createAgentClient({ connection, queueName });
  cleanups.push(() => client.close());
  const worker = await createAgentWorker({
    agents: { payer: () => nestedApprovalAgent(store, ledger, { approvalSecret: SECRET }) },
    store,
    connection,
    queueName,
    sessionLockPrefix: `${queueName}:lock:`,
  });
  cleanups.push(() => worker.close());
  const ledgerLines = () => readFileSync(ledger, 'utf8').trim().split('\n');
  const waiting = async (sessionId: string) => {
    const job = await client.execute({
      agent: 'payer',
      sessionId,
      state: AgentState.empty().withUserMessage('Pay Bob 40'),
    });
    return (await job.finished({ timeoutMs: 20_000 })).state;
  };
  return { client, store, worker, ledgerLines, waiting };
}

describe('decisions through the worker pool (client.decide)', () => {
  it('a decide job takes the decision on a nested call and runs the rest of the run on a worker, with progress', async () => {
    const { client, store, worker, ledgerLines, waiting } = await setup();
    const state = await waiting('s1');
    expect(state.status()).toBe(ExecutionStatus.InProgress);
    const [pending] = state.pendingApprovals();
    expect(pending).toMatchObject({ toolCallId: 't1', path: ['payer'] });

    const progress: AgentStepProgress[] = [];
    const job = await client.decide(
      {
        agent: 'payer',
        sessionId: 's1',
        decisions: [{ toolCallId: 't1', type: 'approve', path: ['payer'], signature: pending?.signature }],
      },
      { onProgress: (p) => progress.push(p) },
    );
    expect(job).toMatchObject({ name: 'decide', agent: 'payer', sessionId: 's1' });
    const result = await job.finished({ timeoutMs: 20_000 });
    expect(result.status).toBe(ExecutionStatus.Completed);
    expect(result.state.finalResponse()).toBe('Bob is paid.');
    expect(result.workerId).toBe(worker.id);
    expect(progress.map((p) => [p.stepNumber, p.stepType])).toEqual([
      [1, 'tool_execution'],
      [2, 'final_response'],
    ]);
    expect((await store.load('s1'))?.state.status()).toBe(ExecutionStatus.Completed);
    expect(ledgerLines()).toEqual(['model:root', 'model:payer', 'transfer:t1', 'model:payer', 'model:root']);
  });

  it('fails a decide job whose id is not pending or whose signature does not match; the session keeps waiting', async () => {
    const { client, store, ledgerLines, waiting } = await setup();
    const state = await waiting('s2');
    const signature = state.pendingApprovals()[0]?.signature;

    const notPending = await client.decide({
      agent: 'payer',
      sessionId: 's2',
      decisions: [{ toolCallId: 'p1', type: 'approve', signature }],
    });
    const refused = notPending.finished({ timeoutMs: 20_000 });
    await expect(refused).rejects.toBeInstanceOf(AgentJobFailedError);
    await expect(refused).rejects.toMatchObject({ errorCode: 'APPROVAL_NOT_PENDING' });

    const forged = await client.decide({
      agent: 'payer',
      sessionId: 's2',
      decisions: [{ toolCallId: 't1', type: 'approve', signature: 'forged' }],
    });
    await expect(forged.finished({ timeoutMs: 20_000 })).rejects.toMatchObject({
      errorCode: 'APPROVAL_SIGNATURE_INVALID',
    });
    const stored = await store.load('s2');
    expect(stored?.state.pendingApprovals().map((p) => p.toolCallId)).toEqual(['t1']);
    expect(ledgerLines()).toEqual(['model:root', 'model:payer']);
  });

  it('a refused decide job (a bad signature, a call not pending) writes no checkpoint', async () => {
    const { client, store, waiting } = await setup();
    const state = await waiting('s5');
    const signature = state.pendingApprovals()[0]?.signature;
    const before = await store.load('s5');
    for (const decision of [
      { toolCallId: 't1', type: 'approve' as const, signature: 'forged' },
      { toolCallId: 'p1', type: 'approve' as const, signature },
    ]) {
      const job = await client.decide({ agent: 'payer', sessionId: 's5', decisions: [decision] });
      await expect(job.finished({ timeoutMs: 20_000 })).rejects.toBeInstanceOf(AgentJobFailedError);
    }
    const after = await store.load('s5');
    expect(after?.version).toBe(before?.version);
    expect(after?.state.metadata()).toEqual(before?.state.metadata());
  });

  it('a decide job retried after its decisions were taken (its worker died) resumes the run instead of refusing them', async () => {
    const { client, store, ledgerLines, waiting } = await setup();
    const state = await waiting('s4');
    const signature = state.pendingApprovals()[0]?.signature;
    // what the first attempt of job 'retry-1' left behind: its mark, and the decision taken and saved
    const stored = await store.load('s4');
    const decided = stored?.state
      .withMetadata(JOB_METADATA_KEY, `${client.queueName}/retry-1`)
      .withApprovalDecision('t1', { type: 'approve' }, ['payer']) as AgentState;
    await store.save('s4', decided, stored?.version ?? null);

    const job = await client.decide(
      { agent: 'payer', sessionId: 's4', decisions: [{ toolCallId: 't1', type: 'approve', signature }] },
      { jobId: 'retry-1' },
    );
    const result = await job.finished({ timeoutMs: 20_000 });
    expect(result.status).toBe(ExecutionStatus.Completed);
    expect(ledgerLines()).toEqual(['model:root', 'model:payer', 'transfer:t1', 'model:payer', 'model:root']);
  });

  it('refuses a decide request without decisions before it reaches the queue', async () => {
    const { client } = await setup();
    await expect(client.decide({ agent: 'payer', sessionId: 's3', decisions: [] })).rejects.toBeInstanceOf(
      InvalidJobPayloadError,
    );
  });
});
