/**
 * The StreamStore contract, for the in-memory store and for Redis (a real redis-server; two store
 * instances on one server stand for two processes): one open stream per chat, readers from the
 * start that follow it live and get every chunk once in order, an end that finishes them, stops
 * heard by the process that runs the chat, and a dead writer's stream given up after its lease.
 */
import type { Cluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  handOffId,
  InMemoryStreamStore,
  StreamNotOpenError,
  type StreamStore,
} from '../../src/chat/stream-store';
import { StreamWriter } from '../../src/chat/stream-writer';
import { RedisStreamStore } from '../../src/distributed/index';
import type { RedisHandle } from '../../src/distributed/redis-modules';
import { Message } from '../../src/state/message';
import type { UIMessageChunk } from '../../src/ui/ui-message';
import { type RedisCluster, startRedisCluster } from '../distributed/support/redis-cluster';
import { type RedisServer, startRedisServer } from '../distributed/support/redis-server';

let server: RedisServer;
// a 3-master Redis Cluster, given to the store as an ioredis Cluster
let cluster: RedisCluster;
let clusterClient: Cluster;
beforeAll(async () => {
  [server, cluster] = await Promise.all([startRedisServer(), startRedisCluster()]);
  clusterClient = cluster.client();
}, 60_000);
afterAll(async () => {
  await clusterClient?.quit();
  await Promise.all([server?.stop(), cluster?.stop()]);
});

const delta = (n: number): UIMessageChunk => ({ type: 'text-delta', id: 't', delta: `${n} ` });

async function collect(stream: AsyncIterable<UIMessageChunk> | null): Promise<UIMessageChunk[]> {
  if (!stream) throw new Error('no stream was open');
  const chunks: UIMessageChunk[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return chunks;
}

/** Resolves once `condition` holds, checking every few ms (a safety net, not a timing assertion). */
async function until(condition: () => Promise<boolean>): Promise<void> {
  for (;;) {
    if (await condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

interface Pair {
  writer: StreamStore;
  reader: StreamStore;
  /**
   * The writer of the chat's open stream dies: its lease runs out, with nothing written after. The
   * stores' lease is the default 30 s, so nothing before this can lapse on a loaded machine.
   */
  lapse(chatId: string, streamId: string): Promise<void>;
}

interface Fixture {
  /** Two stores over the same data: the writer's process and a reader's. */
  pair(): Pair;
}

/**
 * Redis keeps the lease on its own clock: the dying writer's last act is a renew from a store of a
 * 20 ms lease, which then runs out on the server (waited for, never timed).
 */
function redisPair(make: (options?: { leaseMs?: number }) => StreamStore): Pair {
  const writer = make();
  const reader = make();
  return {
    writer,
    reader,
    lapse: async (chatId, streamId) => {
      const last = make({ leaseMs: 20 });
      await last.renew(chatId, streamId);
      await last.close();
      await until(async () => (await reader.active(chatId)) === null);
    },
  };
}

const kinds: [string, Fixture][] = [
  [
    'InMemoryStreamStore',
    {
      pair: () => {
        // a fake clock: the lease runs out when the test moves it past
        let now = 0;
        const store = new InMemoryStreamStore({}, () => now);
        return {
          writer: store,
          reader: store,
          lapse: async () => {
            now += 30_001;
          },
        };
      },
    },
  ],
  [
    'RedisStreamStore',
    {
      pair: () => {
        const prefix = `test-${Math.random().toString(36).slice(2)}:`;
        return redisPair(
          (options) =>
            new RedisStreamStore({ connection: server.connection, prefix, blockMs: 50, ...options }),
        );
      },
    },
  ],
  [
    'RedisStreamStore on Redis Cluster',
    {
      pair: () => {
        // a prefix of its own per test, without a hash tag: each chat in its own slot
        const prefix = `test-${Math.random().toString(36).slice(2)}:`;
        return redisPair(
          (options) => new RedisStreamStore({ connection: clusterClient, prefix, blockMs: 50, ...options }),
        );
      },
    },
  ],
];

describe.each(kinds)('%s', (_kind, fixture) => {
  it('opens one stream per chat at a time: a second begin is refused until the first ends', async () => {
    const { writer, reader } = fixture.pair();
    expect(await writer.begin('c1', 's1')).toBe(true);
    expect(await reader.begin('c1', 's2')).toBe(false);
    expect(await reader.active('c1')).toBe('s1');
    expect(await reader.active('c2')).toBeNull();
    await writer.end('c1', 's1');
    expect(await reader.active('c1')).toBeNull();
    expect(await reader.begin('c1', 's2')).toBe(true);
    await Promise.all([writer.close(), reader.close()]);
  });

  it('a reader gets every chunk once, in order, from the start, live, and finishes at the end', async () => {
    const { writer, reader } = fixture.pair();
    await writer.begin('c1', 's1');
    await writer.append('c1', 's1', [{ type: 'start', messageId: 'm1' }, delta(0)]);
    const early = collect(await reader.read('c1'));
    for (let n = 1; n < 200; n++) await writer.append('c1', 's1', [delta(n)]);
    const late = collect(await reader.read('c1')); // joins mid-stream: still from the start
    await writer.append('c1', 's1', [{ type: 'finish' }]);
    await writer.end('c1', 's1');
    const expected = [
      { type: 'start', messageId: 'm1' },
      ...Array.from({ length: 200 }, (_, n) => delta(n)),
      { type: 'finish' },
    ];
    expect(await early).toEqual(expected);
    expect(await late).toEqual(expected);
    expect(await reader.read('c1')).toBeNull(); // nothing goes on now
    await Promise.all([writer.close(), reader.close()]);
  });

  it('refuses appends to a stream that is not the open one', async () => {
    const { writer } = fixture.pair();
    await expect(writer.append('c1', 's1', [delta(1)])).rejects.toBeInstanceOf(StreamNotOpenError);
    await writer.begin('c1', 's1');
    await expect(writer.append('c1', 'other', [delta(1)])).rejects.toMatchObject({ code: 'STREAM_NOT_OPEN' });
    await writer.end('c1', 's1');
    await expect(writer.renew('c1', 's1')).rejects.toBeInstanceOf(StreamNotOpenError);
    await writer.close();
  });

  it('a stop asked anywhere reaches the listener of the running stream, before or after it listens', async () => {
    const { writer, reader } = fixture.pair();
    expect(await reader.requestStop('c1')).toBe(false); // nothing runs
    await writer.begin('c1', 's1');
    let heard = 0;
    const stopListening = await writer.onStop('c1', 's1', () => heard++);
    expect(await reader.requestStop('c1')).toBe(true);
    await until(async () => heard === 1);
    stopListening();
    // Asked before the run listens: the listener hears it when it starts listening.
    await writer.end('c1', 's1');
    await writer.begin('c1', 's2');
    await reader.requestStop('c1');
    let late = 0;
    await writer.onStop('c1', 's2', () => late++);
    await until(async () => late >= 1);
    await writer.end('c1', 's2');
    await Promise.all([writer.close(), reader.close()]);
  });

  it('a message steered anywhere reaches the listener of the running stream once each, in order, before or after it listens', async () => {
    const { writer, reader } = fixture.pair();
    expect(await reader.steer('c1', Message.user('nobody runs'))).toBe(false);
    await writer.begin('c1', 's1');
    expect(await reader.steer('c1', Message.user('first'))).toBe(true); // before the run listens
    const heard: string[] = [];
    const stopListening = await writer.onSteer('c1', 's1', (message) => heard.push(message.content));
    expect(await reader.steer('c1', Message.user('second'))).toBe(true);
    expect(await writer.steer('c1', Message.user('third'))).toBe(true);
    await until(async () => heard.length === 3);
    expect(heard).toEqual(['first', 'second', 'third']);
    stopListening();
    await writer.end('c1', 's1');
    expect(await reader.steer('c1', Message.user('too late'))).toBe(false);
    // the next run of the chat hears only its own
    await writer.begin('c1', 's2');
    const next: string[] = [];
    await writer.onSteer('c1', 's2', (message) => next.push(message.content));
    await reader.steer('c1', Message.user('for s2'));
    await until(async () => next.length === 1);
    expect(next).toEqual(['for s2']);
    await writer.end('c1', 's2');
    await Promise.all([writer.close(), reader.close()]);
  });

  it('keeps each steered message, with its stream, across streams until it is settled', async () => {
    const { writer, reader, lapse } = fixture.pair();
    const tagged = (content: string, steerId: string) =>
      Message.of({ role: 'user', content, metadata: { steerId } });
    await writer.begin('c1', 's1');
    expect(await reader.steer('c1', tagged('first', 'm1'))).toBe(true);
    expect(await reader.steer('c1', tagged('second', 'm2'))).toBe(true);
    // the writer dies: its lease runs out, the messages stay
    await lapse('c1', 's1');
    expect(await reader.active('c1')).toBeNull();
    expect(await reader.begin('c1', 's2')).toBe(true);
    expect(await writer.steer('c1', tagged('third', 'm3'))).toBe(true);
    const pending = await reader.handedOff('c1');
    expect(pending.map((h) => [h.streamId, h.message.content, h.message.metadata])).toEqual([
      ['s1', 'first', { steerId: 'm1' }],
      ['s1', 'second', { steerId: 'm2' }],
      ['s2', 'third', { steerId: 'm3' }],
    ]);
    expect(pending.map((h) => handOffId(h.message))).toEqual(['m1', 'm2', 'm3']);
    await reader.settle('c1', ['m2', 'm1']);
    await reader.end('c1', 's2');
    expect((await writer.handedOff('c1')).map((h) => h.message.content)).toEqual(['third']);
    await writer.settle('c1', ['m3']);
    expect(await reader.handedOff('c1')).toEqual([]);
    await Promise.all([writer.close(), reader.close()]);
  });

  it('a writer that died is given up after its lease: its readers finish, and the chat can run again', async () => {
    const { writer, reader, lapse } = fixture.pair();
    await writer.begin('c1', 's1');
    await writer.append('c1', 's1', [delta(1)]);
    const read = collect(await reader.read('c1'));
    // No end, no renew after: the writer is gone.
    await lapse('c1', 's1');
    expect(await reader.active('c1')).toBeNull();
    expect(await reader.begin('c1', 's2')).toBe(true);
    expect(await read).toEqual([delta(1)]);
    await Promise.all([writer.close(), reader.close()]);
  });

  it('StreamWriter writes chunks in batches, in order, and ends the stream', async () => {
    const { writer, reader } = fixture.pair();
    await writer.begin('c1', 's1');
    const read = collect(await reader.read('c1'));
    const out = new StreamWriter(writer, 'c1', 's1', { flushMs: 5 });
    for (let n = 0; n < 1000; n++) {
      out.write(delta(n));
      if (n % 100 === 99) await new Promise((resolve) => setImmediate(resolve));
    }
    await out.end();
    expect(await read).toEqual(Array.from({ length: 1000 }, (_, n) => delta(n)));
    expect(out.appends).toBeLessThanOrEqual(100); // deltas written together go in one append
    await Promise.all([writer.close(), reader.close()]);
  });
});

describe('RedisStreamStore: a read of steered messages that fails', () => {
  it('is logged, and the run still hears that message and the next ones, once each, in order', async () => {
    const prefix = `test-${Math.random().toString(36).slice(2)}:`;
    const make = () => new RedisStreamStore({ connection: server.connection, prefix, blockMs: 50 });
    const writer = make();
    const reader = make();
    const logged = vi.spyOn(console, 'error').mockImplementation(() => {});
    try {
      await writer.begin('c1', 's1');
      const heard: string[] = [];
      await writer.onSteer('c1', 's1', (message) => heard.push(message.content));
      // the writer's next read of the steered list fails once (a dropped connection)
      const commands = await (writer as unknown as { redis(): Promise<RedisHandle> }).redis();
      const lrange = commands.lrange.bind(commands);
      let failed!: () => void;
      const failure = new Promise<void>((resolve) => {
        failed = resolve;
      });
      commands.lrange = (async () => {
        commands.lrange = lrange;
        failed();
        throw new Error('connection dropped');
      }) as typeof commands.lrange;
      expect(await reader.steer('c1', Message.user('first'))).toBe(true);
      await failure;
      await until(async () => logged.mock.calls.length === 1);
      expect(String(logged.mock.calls[0]?.[0])).toMatch(/chat "c1"/);
      expect(await reader.steer('c1', Message.user('second'))).toBe(true);
      await until(async () => heard.length === 2);
      expect(heard).toEqual(['first', 'second']);
      await writer.end('c1', 's1');
    } finally {
      logged.mockRestore();
      await Promise.all([writer.close(), reader.close()]);
    }
  }, 20_000);
});
