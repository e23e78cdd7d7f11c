/**
 * createChatHandler({ client }) in one process with an in-process worker over a real
 * redis-server: approvals go through the pool as decide jobs, a job that fails ends the chat's
 * stream with an error, and what a pool chat does not take is refused when the handler is made.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createChatHandler } from '../../src/chat/chat-handler';
import {
  type AgentClient,
  AgentJobFailedError,
  type AgentWorker,
  createAgentClient,
  createAgentWorker,
  RedisSessionStore,
  RedisStreamStore,
} from '../../src/distributed/index';
import { scriptedDriver } from '../../src/drivers/scripted-driver';
import type { Hook } from '../../src/hooks/hook';
import type { Agent } from '../../src/runtime/agent-actor';
import { createAgent } from '../../src/runtime/create-agent';
import type { AgentState } from '../../src/state/agent-state';
import { chatClient, serveChat } from '../support/ai-chat';
import { partsOf, slowChat, textOf, transferTool } from '../support/chat-fixtures';
import { LEDGER_ANSWER, LEDGER_STEPS, ledgerAgent, readLedger } from './support/ledger-agent';
import { type RedisServer, startRedisServer } from './support/redis-server';

let redis: RedisServer;
const cleanups: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  redis = await startRedisServer();
}, 20_000);

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
}, 20_000);

afterAll(async () => {
  await redis?.stop();
});

interface PoolOptions {
  /** Give the worker the stream store (default true). */
  readonly workerStreams?: boolean;
  /** Start the worker later, with `startWorker()`. */
  readonly deferWorker?: boolean;
  /** The stream store's lease (and the handler's renewal every third of it). */
  readonly leaseMs?: number;
  readonly whileRunning?: 'reject' | 'steer' | 'queue';
}

/** A queue, stores, a worker running `agents` and a pool chat handler for `agent`, on loopback. */
async function pool(agents: Record<string, () => Agent>, agent: string, options: PoolOptions = {}) {
  const connection = redis.connection;
  const queueName = `q-${randomUUID()}`;
  const prefix = `${queueName}:`;
  const store = new RedisSessionStore({ connection, prefix });
  const lease = options.leaseMs ? { leaseMs: options.leaseMs, blockMs: options.leaseMs } : {};
  const streams = new RedisStreamStore({ connection, prefix, ...lease });
  cleanups.push(
    () => store.close(),
    () => streams.close(),
  );
  let workers = 0;
  const startWorker = async (own: Record<string, () => Agent> = agents) => {
    const worker = await createAgentWorker({
      agents: own,
      store,
      connection,
      queueName,
      id: workers++ === 0 ? 'first' : 'second',
      ...(options.workerStreams !== false && { streams }),
    });
    cleanups.push(() => worker.close());
    return worker;
  };
  if (!options.deferWorker) await startWorker();
  const client = await createAgentClient({ connection, queueName });
  cleanups.push(() => client.close());
  const logged: unknown[] = [];
  const renew = options.leaseMs ? { streamRenewMs: Math.floor(options.leaseMs / 3) } : {};
  const handler = createChatHandler({
    client,
    agent,
    store,
    streams,
    onError: (error) => logged.push(error),
    whileRunning: options.whileRunning,
    ...renew,
  });
  const server = await serveChat(handler);
  cleanups.push(server.close);
  return { api: server.api, store, streams, client, logged, startWorker };
}

describe('createChatHandler({ client })', () => {
  it('approvals: the call waits, the approval posted to the handler is a decide job, the message goes on once', async () => {
    const ledger: string[] = [];
    const payer = () =>
      createAgent({
        driver: scriptedDriver([
          { text: 'Paying.', toolCalls: [{ name: 'transfer', args: { to: 'bob', amount: 40 }, id: 't1' }] },
          { text: 'Paid.' },
        ]),
        tools: { transfer: transferTool(ledger) },
      });
    const { api, store, logged } = await pool({ payer }, 'payer');
    const { chat, errors } = chatClient(api, 'pay');
    await chat.sendMessage({ text: 'Pay bob 40' });
    expect(partsOf(chat.lastMessage).find((p) => p.type === 'tool-transfer')).toMatchObject({
      state: 'approval-requested',
      approval: { id: 't1' },
    });
    await chat.addToolApprovalResponse({ id: 't1', approved: true });
    await chat.sendMessage();
    expect(errors).toEqual([]);
    expect(logged).toEqual([]);
    expect(ledger).toEqual(['bob:40']);
    expect(chat.messages.map((m) => m.role)).toEqual(['user', 'assistant']);
    expect(
      partsOf(chat.lastMessage)
        .filter((p) => p.type !== 'step-start')
        .map((p) => [p.type, p.text ?? p.state]),
    ).toEqual([
      ['text', 'Paying.'],
      ['tool-transfer', 'output-available'],
      ['text', 'Paid.'],
    ]);
    expect((await store.load('pay'))?.state.finalResponse()).toBe('Paid.');
  }, 30_000);

  it('a job that fails ends the chat stream with an error the chat client reports', async () => {
    const { api } = await pool(
      { other: () => createAgent({ driver: scriptedDriver([{ text: 'hi' }]) }) },
      'nobody',
    );
    const { chat, errors } = chatClient(api, 'unknown');
    await chat.sendMessage({ text: 'Hello?' });
    expect(errors.map((e) => e.message)).toEqual(['The agent could not answer (UNKNOWN_AGENT).']);
    expect((await fetch(`${api}/unknown/stream`)).status).toBe(204);
  }, 30_000);

  it('a chat job on a worker without streams fails with NO_STREAM_STORE', async () => {
    const agents = { echo: () => createAgent({ driver: scriptedDriver([{ text: 'hi' }]) }) };
    const { client } = await pool(agents, 'echo', { workerStreams: false });
    const job = await (client as AgentClient).execute({
      agent: 'echo',
      sessionId: 'no-streams',
      message: 'Hello?',
      chatStream: { streamId: 's1' },
    });
    const failed = await job.finished({ timeoutMs: 20_000 }).catch((error: unknown) => error);
    expect(failed).toBeInstanceOf(AgentJobFailedError);
    expect((failed as AgentJobFailedError).errorCode).toBe('NO_STREAM_STORE');
  }, 30_000);

  it("whileRunning 'steer': the AI SDK chat client's second message mid-run reaches the run on its worker", async () => {
    const { agent, prompts, started, release } = slowChat([
      (state) => ({ text: `Answered: ${state.messages().at(-1)?.content}` }),
    ]);
    const { api, store, streams, logged } = await pool({ slow: () => agent }, 'slow', {
      whileRunning: 'steer',
    });
    const { chat, errors, responded } = chatClient(api, 'steer');
    const answering = responded('POST');
    const first = chat.sendMessage({ text: 'Weather in Lisbon?' });
    expect(await answering).toBe(200);
    await started.opened;
    // the user sees the answer begin (its tool call), then sends the next message
    await vi.waitUntil(() => chat.messages.some((m) => m.role === 'assistant'), { timeout: 20_000 });
    const steered = responded('POST');
    const second = chat.sendMessage({ text: 'And in Celsius?' });
    // the message reaches the worker before the handler answers: the tool is still in flight
    expect(await steered).toBe(200);
    release.open();
    await Promise.all([first, second]);
    expect(errors).toEqual([]);
    expect(logged).toEqual([]);
    expect(prompts[1]?.at(-1)).toBe('user: And in Celsius?');
    const stored = (await store.load('steer'))?.state;
    // the session holds the message: the stream store keeps no hand-off of it once the run concluded
    await vi.waitUntil(async () => (await streams.handedOff('steer')).length === 0, { timeout: 10_000 });
    expect(stored?.executionCount()).toBe(1);
    expect(stored?.finalResponse()).toBe('Answered: And in Celsius?');
    const assistant = chat.messages.filter((m) => m.role === 'assistant');
    expect(assistant.map(textOf)).toEqual(['Answered: And in Celsius?']);
    // the steered message entered the conversation once: the next execution does not ask it again
    await chat.sendMessage({ text: 'Thanks' });
    expect(errors).toEqual([]);
    expect(prompts.at(-1)?.filter((line) => line === 'user: And in Celsius?')).toHaveLength(1);
    expect(prompts.at(-1)?.at(-1)).toBe('user: Thanks');
    const next = (await store.load('steer'))?.state;
    expect(next?.steeredMessages()).toEqual([]);
    expect(next?.messages().filter((m) => m.content === 'And in Celsius?')).toHaveLength(1);
  }, 30_000);

  it("whileRunning 'queue': the second message is answered by the next execution on the worker, on the same stream", async () => {
    const answerLastUser = (state: AgentState) => ({
      text: `Answered: ${
        state
          .messages()
          .filter((m) => m.role === 'user')
          .at(-1)?.content
      }`,
    });
    const { agent, prompts, started, release } = slowChat([answerLastUser, answerLastUser]);
    const { api, store, streams, logged } = await pool({ slow: () => agent }, 'slow', {
      whileRunning: 'queue',
    });
    const { chat, errors, responded } = chatClient(api, 'queue');
    const answering = responded('POST');
    const first = chat.sendMessage({ text: 'Weather in Lisbon?' });
    expect(await answering).toBe(200);
    await started.opened;
    // the user sees the answer begin (its tool call), then sends the next message
    await vi.waitUntil(() => chat.messages.some((m) => m.role === 'assistant'), { timeout: 20_000 });
    const queued = responded('POST');
    const second = chat.sendMessage({ text: 'And in Celsius?' });
    expect(await queued).toBe(200);
    release.open();
    await Promise.all([first, second]);
    expect(errors).toEqual([]);
    expect(logged).toEqual([]);
    expect(prompts).toHaveLength(3);
    expect(prompts[1]?.some((line) => line.includes('Celsius'))).toBe(false);
    expect(prompts[2]?.at(-1)).toBe('user: And in Celsius?');
    const stored = (await store.load('queue'))?.state;
    // the session holds the message: the stream store keeps no hand-off of it once the run concluded
    await vi.waitUntil(async () => (await streams.handedOff('queue')).length === 0, { timeout: 10_000 });
    expect(stored?.executionCount()).toBe(2);
    expect(stored?.finalResponse()).toBe('Answered: And in Celsius?');
    expect(chat.messages.map((m) => [m.role, textOf(m)])).toEqual([
      ['user', 'Weather in Lisbon?'],
      ['assistant', 'Answered: Weather in Lisbon?'],
      ['user', 'And in Celsius?'],
      ['assistant', 'Answered: And in Celsius?'],
    ]);
  }, 30_000);

  it('a job that waits for a worker longer than the stream lease keeps the chat claimed and is answered', async () => {
    const agents = { echo: () => createAgent({ driver: scriptedDriver([{ text: 'Hello there.' }]) }) };
    const { api, startWorker, logged } = await pool(agents, 'echo', { deferWorker: true, leaseMs: 1_000 });
    const { chat, errors, responded } = chatClient(api, 'queued');
    const sent = chat.sendMessage({ text: 'Hello?' });
    expect(await responded('POST')).toBe(200);
    // several leases pass with no worker; the handler keeps the chat's stream claimed
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    const busy = await fetch(api, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        id: 'queued',
        trigger: 'submit-message',
        messages: [{ id: 'u2', role: 'user', parts: [{ type: 'text', text: 'Anyone?' }] }],
      }),
    });
    expect(busy.status).toBe(409);
    await startWorker();
    await sent;
    expect(errors).toEqual([]);
    expect(logged).toEqual([]);
    expect(partsOf(chat.lastMessage).at(-1)).toMatchObject({ type: 'text', text: 'Hello there.' });
  }, 30_000);

  it('a worker closed mid-run hands the chat over: the next worker goes on on the same stream, each step once', async () => {
    const { api, startWorker, logged } = await pool({}, 'ledger', { deferWorker: true });
    const dir = mkdtempSync(join(tmpdir(), 'chat-pool-close-'));
    cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
    const ledger = join(dir, 'ledger.txt');
    let closing: Promise<void> | null = null;
    let first: AgentWorker | null = null;
    // the close is asked for while step 2's tool call runs: that step finishes and is saved first
    const closeDuringStep2: Hook = {
      name: 'close-during-step-2',
      beforeToolUse: (_state, { toolCall }) => {
        if (toolCall.id === 'untagged-call-2' && !closing) closing = (first as AgentWorker).close();
        return undefined;
      },
    };
    first = await startWorker({
      ledger: () =>
        createAgent({
          ...ledgerAgent({ ledger, workerTag: 'first', toolDelayMs: 20 }).definition,
          hooks: [closeDuringStep2],
        }),
    });
    const data: unknown[] = [];
    const { chat, errors } = chatClient(api, 'handed-over', { onData: (part) => data.push(part) });
    const sent = chat.sendMessage({ text: 'Record four things' });
    await vi.waitUntil(() => closing !== null, { timeout: 10_000, interval: 5 });
    await closing;
    await startWorker({ ledger: () => ledgerAgent({ ledger, workerTag: 'second' }) });
    await sent;
    expect(errors).toEqual([]);
    expect(logged).toEqual([]);
    expect(data).toEqual([
      { type: 'data-step-restarted', data: { stepNumber: 3, workerId: 'second' }, transient: true },
    ]);
    const parts = partsOf(chat.lastMessage);
    expect(parts.filter((p) => p.type === 'step-start')).toHaveLength(LEDGER_STEPS);
    expect(parts.filter((p) => p.type === 'tool-record').map((p) => [p.toolCallId, p.state])).toEqual(
      [1, 2, 3, 4].map((n) => [`untagged-call-${n}`, 'output-available']),
    );
    expect(parts.at(-1)).toMatchObject({ type: 'text', text: LEDGER_ANSWER });
    expect(readLedger(ledger).map((l) => l.worker)).toEqual(['first', 'first', 'second', 'second']);
  }, 30_000);

  it('refuses a bad whileRunning and a missing store when the handler is made', async () => {
    const connection = redis.connection;
    const client = await createAgentClient({ connection, queueName: `q-${randomUUID()}` });
    const store = new RedisSessionStore({ connection });
    const streams = new RedisStreamStore({ connection });
    cleanups.push(
      () => client.close(),
      () => store.close(),
      () => streams.close(),
    );
    for (const whileRunning of ['reject', 'steer', 'queue'] as const)
      expect(() =>
        createChatHandler({ client, agent: 'support', store, streams, whileRunning }),
      ).not.toThrow();
    const drop = 'drop' as unknown as 'reject';
    expect(() => createChatHandler({ client, agent: 'support', store, streams, whileRunning: drop })).toThrow(
      /Invalid whileRunning: "drop" is not 'reject', 'steer' or 'queue'/,
    );
    for (const aiSdkVersion of [6, 7] as const)
      expect(() =>
        createChatHandler({ client, agent: 'support', store, streams, aiSdkVersion }),
      ).not.toThrow();
    const five = 5 as unknown as 6;
    expect(() => createChatHandler({ client, agent: 'support', store, streams, aiSdkVersion: five })).toThrow(
      /Invalid aiSdkVersion: 5 is not 6 or 7/,
    );
    // @ts-expect-error: the store is required with a client
    expect(() => createChatHandler({ client, agent: 'support', streams })).toThrow(
      /Invalid store: with `client`, the workers' SessionStore/,
    );
  });
});
