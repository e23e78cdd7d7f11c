/**
 * Chats across processes (issue 35), over a redis-server of the bench's own:
 * - stop latency: a run answers through one chat handler (node:http on 127.0.0.1), a stop is posted
 *   to another handler sharing the RedisStreamStore; the time from sending the stop to the
 *   answer's `finish` chunk reaching the first client (p50, p99 over CHAT_STOPS runs, default 100);
 * - stream storage: 1,000 text deltas written through StreamWriter (batched every 20 ms) at two
 *   paces, as fast as they come and one a millisecond: XADDs (Redis commands) and bytes the stream
 *   holds, per 1,000 deltas.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { RedisStreamStore } from '../src/distributed/index';
import { abortableDelay } from '../src/drivers/abortable-delay';
import { createAgent, type Driver, InMemorySessionStore, scriptedDriver } from '../src/index';
import { createChatHandler, StreamWriter, toNodeHandler } from '../src/ui/index';
import { median, now, printTable } from './harness';
import { redisServerPath, startRedis } from './redis-process';

const STOPS = Number(process.env.CHAT_STOPS ?? 100);

/** A model that types a long answer, a word every 2 ms, until stopped. */
const typing: Driver = {
  name: 'typing',
  async infer(state, context) {
    const answered = await scriptedDriver([{ text: 'word '.repeat(2_000).trim() }]).infer(state, context);
    const ids = {
      agentId: state.agentId(),
      parentAgentId: state.parentAgentId(),
      executionId: state.executionId() ?? '',
      stepNumber: state.stepCount() + 1,
    };
    for (let i = 0; i < 2_000; i++) {
      await abortableDelay(2, context.signal);
      context.report({ type: 'text.delta', ...ids, delta: 'word ' });
    }
    return answered;
  },
};

async function serve(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/chat`;
}

function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
}

async function stopLatency(port: number): Promise<Record<string, string | number>> {
  const connection = { host: '127.0.0.1', port };
  const store = new InMemorySessionStore();
  const agent = createAgent({ driver: typing, store });
  const streamsA = new RedisStreamStore({ connection, prefix: 'bench:' });
  const streamsB = new RedisStreamStore({ connection, prefix: 'bench:' });
  const a = createServer(toNodeHandler(createChatHandler({ agent, streams: streamsA })));
  const b = createServer(toNodeHandler(createChatHandler({ agent, streams: streamsB })));
  const [apiA, apiB] = [await serve(a), await serve(b)];
  const latencies: number[] = [];
  for (let i = 0; i < STOPS; i++) {
    const id = `stop-${i}`;
    const response = await fetch(apiA, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        id,
        trigger: 'submit-message',
        messages: [{ id: 'u', role: 'user', parts: [{ type: 'text', text: 'go' }] }],
      }),
    });
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    let text = '';
    while (!text.includes('"text-delta"')) text += decoder.decode((await reader.read()).value);
    const start = now();
    const stop = await fetch(`${apiB}/${id}/stop`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    if (stop.status !== 202) throw new Error(`stop answered ${stop.status}`);
    for (;;) {
      const { done, value } = await reader.read();
      if (done) throw new Error('the answer ended without finish');
      text += decoder.decode(value);
      if (text.includes('"type":"finish"')) break;
    }
    latencies.push(now() - start);
    await reader.cancel();
    // the run has ended in A's process once its stream is no longer open
    while ((await streamsB.active(id)) !== null) await new Promise((resolve) => setTimeout(resolve, 1));
  }
  for (const server of [a, b]) {
    server.closeAllConnections();
    server.close();
  }
  await Promise.all([streamsA.close(), streamsB.close()]);
  return {
    runs: STOPS,
    'stop latency p50 (ms)': median(latencies),
    'p99 (ms)': percentile(latencies, 99),
    'max (ms)': Math.max(...latencies),
  };
}

async function storageCost(port: number, pace: 'as fast as they come' | 'one a millisecond') {
  const redis = new Redis({ host: '127.0.0.1', port });
  const streams = new RedisStreamStore({ connection: { host: '127.0.0.1', port }, prefix: 'cost:' });
  const chatId = `cost-${pace.length}`;
  await streams.begin(chatId, 's1');
  const stats = async () =>
    Number(/cmdstat_xadd:calls=(\d+)/.exec(await redis.info('commandstats'))?.[1] ?? 0);
  const before = await stats();
  const writer = new StreamWriter(streams, chatId, 's1');
  for (let i = 0; i < 1_000; i++) {
    writer.write({ type: 'text-delta', id: 't', delta: 'word ' });
    if (pace === 'one a millisecond') await new Promise((resolve) => setTimeout(resolve, 1));
    else await new Promise((resolve) => setImmediate(resolve));
  }
  await writer.flush();
  const xadds = (await stats()) - before;
  const bytes = Number(await redis.call('MEMORY', 'USAGE', `cost:stream:${chatId}:s1`));
  await writer.end();
  await streams.close();
  redis.disconnect();
  return { pace, 'XADDs per 1,000 deltas': xadds, 'deltas per XADD': 1_000 / xadds, 'stream bytes': bytes };
}

export default async function chatStreams(): Promise<void> {
  const binary = redisServerPath();
  if (!binary) {
    console.log('chat-streams: redis-server is not installed; skipped (apt-get install -y redis-server)');
    return;
  }
  const redis = await startRedis(binary);
  const dir = mkdtempSync(join(tmpdir(), 'chat-streams-'));
  try {
    printTable(
      "Stop from another process (RedisStreamStore, loopback HTTP): stop posted to B -> finish at A's client",
      [await stopLatency(redis.port)],
    );
    printTable('Stream storage: 1,000 text deltas through StreamWriter (20 ms batches) into a Redis Stream', [
      await storageCost(redis.port, 'as fast as they come'),
      await storageCost(redis.port, 'one a millisecond'),
    ]);
  } finally {
    await redis.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
