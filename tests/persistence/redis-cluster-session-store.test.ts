/**
 * RedisSessionStore on a real 3-master Redis Cluster, given an ioredis Cluster as its connection:
 * the SessionStore and journal contracts, sessions spread over every master under the default
 * prefix, and sessions of the old key layout (under a prefix with a hash tag of its own, the only
 * way they could be stored on a Cluster) loaded and moved.
 */
import { randomUUID } from 'node:crypto';
import type { Cluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_SESSION_KEY_PREFIX, RedisSessionStore } from '../../src/distributed/index';
import type { SessionStore } from '../../src/persistence/index';
import { AgentState } from '../../src/state/agent-state';
import { type RedisCluster, startRedisCluster } from '../distributed/support/redis-cluster';
import type { StoreFixture, StoreKind } from './fixtures';
import { describeJournalContract } from './journal.contract.test';
import { describeSessionStoreContract } from './session-store.contract.test';

let cluster: RedisCluster;
let raw: Cluster;
beforeAll(async () => {
  cluster = await startRedisCluster();
  raw = cluster.client();
}, 60_000);
afterAll(async () => {
  await raw?.quit();
  await cluster?.stop();
});

/** Removes every key under `prefix` on every master. */
async function removeKeys(prefix: string): Promise<void> {
  for (const node of raw.nodes('master')) {
    let cursor = '0';
    do {
      const [next, keys] = await node.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
      for (const key of keys) await node.del(key);
      cursor = next;
    } while (cursor !== '0');
  }
}

const clusterKind: StoreKind = {
  name: 'RedisSessionStore on Redis Cluster',
  async create(): Promise<StoreFixture> {
    // A prefix of its own per test (no hash tag in it: each session has its own slot).
    const prefix = `contract-${randomUUID()}:`;
    const opened: SessionStore[] = [];
    const open = () => {
      const store = new RedisSessionStore({ connection: raw, prefix });
      opened.push(store);
      return store;
    };
    const store = open();
    const key = (id: string) => store.journalKey(id);
    return {
      store,
      reopen: open,
      readRaw: async (id) => JSON.stringify(await raw.lrange(key(id), 0, -1)),
      readRecord: async (id) => (await raw.lindex(key(id), -1)) ?? '',
      readRecords: (id) => raw.lrange(key(id), 0, -1),
      writeRecord: async (id, text) => {
        await raw.lset(key(id), -1, text);
      },
      cleanup: async () => {
        await Promise.all(opened.map((s) => s.close()));
        await removeKeys(prefix);
      },
    };
  },
};

describeSessionStoreContract([clusterKind]);
describeJournalContract([clusterKind]);

describe('RedisSessionStore on Redis Cluster with default options', () => {
  it('puts each session in a slot of its own, sessions on every master; lists, forks and deletes across them', async () => {
    const store = new RedisSessionStore({ connection: raw });
    const ids = Array.from({ length: 30 }, (_, i) => `spread-${i}`);
    try {
      for (const id of ids) {
        const v = await store.save(id, AgentState.empty().withUserMessage(id), null);
        await store.save(id, AgentState.empty().withUserMessage(id).withUserMessage('again'), v);
      }
      const perMaster = await cluster.keysPerMaster(`${DEFAULT_SESSION_KEY_PREFIX}{spread-*}:journal`);
      expect([...perMaster.values()].reduce((a, b) => a + b, 0)).toBe(ids.length);
      expect([...perMaster.values()].every((count) => count > 0)).toBe(true);
      expect((await store.list()).filter((id) => id.startsWith('spread-'))).toEqual([...ids].sort());
      // a fork lands in its own slot, wherever the source is
      expect((await store.fork('spread-0', 1, 'spread-fork')).version).toBe(1);
      expect((await store.load('spread-fork'))?.state.messages().map((m) => m.content)).toEqual(['spread-0']);
      await store.delete('spread-1');
      expect(await store.load('spread-1')).toBeNull();
    } finally {
      for (const id of [...ids, 'spread-fork']) await store.delete(id);
      await store.close();
    }
  });
});

describe('RedisSessionStore on Redis Cluster: the key layout from before', () => {
  it('loads a session stored under the old keys (a prefix with a hash tag), and moves it at its first touch', async () => {
    const prefix = `{old-${randomUUID()}}:`;
    // what the store wrote before: <prefix>journal:<id>, <prefix>journal-snapshot:<id>, <prefix>sessions
    const writer = new RedisSessionStore({ connection: raw, prefix: `${prefix}new:` });
    const state = AgentState.empty().withUserMessage('from before');
    await writer.save('legacy', state, null);
    const [record] = await raw.lrange(writer.journalKey('legacy'), 0, -1);
    await writer.delete('legacy');
    await writer.close();
    await raw.rpush(`${prefix}journal:legacy`, record as string);
    await raw.set(`${prefix}journal-snapshot:legacy`, '0');
    await raw.zadd(`${prefix}sessions`, 0, 'legacy');

    const store = new RedisSessionStore({ connection: raw, prefix });
    try {
      expect(await store.list()).toEqual(['legacy']);
      const loaded = await store.load('legacy');
      expect(loaded?.version).toBe(1);
      expect(loaded?.state.toJSON()).toEqual(state.toJSON());
      // moved at that first touch: the old keys are gone, the new ones hold it
      expect(await raw.exists(`${prefix}journal:legacy`)).toBe(0);
      expect(await raw.zcard(`${prefix}sessions`)).toBe(0);
      expect(await raw.llen(`${prefix}{legacy}:journal`)).toBe(1);
      expect(await store.save('legacy', state.withUserMessage('after'), 1)).toBe(2);
      await expect(store.save('legacy', state, null)).rejects.toMatchObject({ code: 'SESSION_CONFLICT' });
      expect(await store.list()).toEqual(['legacy']);
    } finally {
      await store.close();
      await removeKeys(prefix);
    }
  });
});
