/**
 * A Redis that cannot be reached fails loudly: createAgentWorker, createAgentClient and a store's
 * first operation reject with RedisUnreachableError (REDIS_UNREACHABLE) naming the address given,
 * after `connectTimeoutMs`, instead of waiting without end (or dialling an address nobody gave).
 */
import { createServer } from 'node:net';
import { Cluster } from 'ioredis';
import { describe, expect, it } from 'vitest';
import {
  createAgentClient,
  createAgentWorker,
  RedisSessionStore,
  RedisStreamStore,
  RedisUnreachableError,
} from '../../src/distributed/index';
import { InMemorySessionStore } from '../../src/persistence/in-memory-session-store';
import { InvalidArgumentError } from '../../src/state/errors';
import { ledgerAgent } from './support/ledger-agent';

/** A loopback port nothing listens on (taken, then closed again). */
function closedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

const unreachable = (address: string) =>
  expect.objectContaining({
    code: 'REDIS_UNREACHABLE',
    address,
    timeoutMs: 300,
    message: expect.stringContaining(address),
  });

describe('REDIS_UNREACHABLE', () => {
  it('createAgentWorker rejects, naming host:port', async () => {
    const port = await closedPort();
    const error = await createAgentWorker({
      agents: { ledger: ledgerAgent({ ledger: '/dev/null', workerTag: 'w' }) },
      store: new InMemorySessionStore(),
      connection: { host: '127.0.0.1', port },
      connectTimeoutMs: 300,
      onError: () => undefined,
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RedisUnreachableError);
    expect(error).toEqual(unreachable(`127.0.0.1:${port}`));
  }, 20_000);

  it('createAgentClient rejects, naming host:port', async () => {
    const port = await closedPort();
    const error = await createAgentClient({
      connection: { host: '127.0.0.1', port },
      connectTimeoutMs: 300,
      onError: () => undefined,
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RedisUnreachableError);
    expect(error).toEqual(unreachable(`127.0.0.1:${port}`));
  }, 20_000);

  it("a store's first operation rejects; the next one tries again", async () => {
    const port = await closedPort();
    const sessions = new RedisSessionStore({
      connection: { host: '127.0.0.1', port },
      connectTimeoutMs: 300,
    });
    const streams = new RedisStreamStore({ connection: { host: '127.0.0.1', port }, connectTimeoutMs: 300 });
    try {
      await expect(sessions.load('s')).rejects.toEqual(unreachable(`127.0.0.1:${port}`));
      await expect(sessions.list()).rejects.toEqual(unreachable(`127.0.0.1:${port}`));
      await expect(streams.active('c')).rejects.toEqual(unreachable(`127.0.0.1:${port}`));
    } finally {
      await sessions.close();
      await streams.close();
    }
  }, 20_000);

  it('a Cluster whose nodes cannot be reached: rejects naming its startup nodes, never 127.0.0.1:6379', async () => {
    const port = await closedPort();
    const cluster = new Cluster([{ host: '127.0.0.1', port }], { lazyConnect: true });
    try {
      const worker = await createAgentWorker({
        agents: { ledger: ledgerAgent({ ledger: '/dev/null', workerTag: 'w' }) },
        store: new InMemorySessionStore(),
        connection: cluster,
        connectTimeoutMs: 300,
        onError: () => undefined,
      }).catch((e: unknown) => e);
      expect(worker).toBeInstanceOf(RedisUnreachableError);
      expect((worker as RedisUnreachableError).address).toContain(`127.0.0.1:${port}`);
      expect((worker as RedisUnreachableError).message).not.toContain('6379');
      const store = new RedisSessionStore({ connection: cluster, connectTimeoutMs: 300 });
      await expect(store.load('s')).rejects.toMatchObject({ code: 'REDIS_UNREACHABLE' });
      await store.close();
    } finally {
      cluster.disconnect();
    }
  }, 20_000);

  it('refuses a connectTimeoutMs that is not a positive integer, and a Cluster queue prefix without a hash tag', async () => {
    expect(
      () => new RedisSessionStore({ connection: { host: '127.0.0.1', port: 1 }, connectTimeoutMs: 0 }),
    ).toThrow(InvalidArgumentError);
    const cluster = new Cluster([{ host: '127.0.0.1', port: 1 }], { lazyConnect: true });
    try {
      await expect(
        createAgentClient({ connection: cluster, prefix: 'bull', connectTimeoutMs: 300 }),
      ).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', message: expect.stringContaining('hash tag') });
    } finally {
      cluster.disconnect();
    }
  });
});
