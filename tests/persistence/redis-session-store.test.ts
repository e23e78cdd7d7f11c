import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisSessionStore } from '../../src/distributed/index';
import { CorruptSessionError } from '../../src/persistence/errors';
import type { SessionStore } from '../../src/persistence/index';
import { AgentState } from '../../src/state/agent-state';
import { type RedisServer, startRedisServer } from '../distributed/support/redis-server';
import type { StoreFixture, StoreKind } from './fixtures';
import { describeJournalContract } from './journal.contract.test';
import { describeJournalDamage } from './journal-damage.test';
import { describeSessionStoreContract } from './session-store.contract.test';

let server: RedisServer;
beforeAll(async () => {
  server = await startRedisServer();
}, 20_000);
afterAll(async () => {
  await server?.stop();
});

/** Removes every key under `prefix` (SCAN, bounded by the number of keys). */
async function removeKeys(redis: Redis, prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
    if (keys.length > 0) await redis.del(...keys);
    cursor = next;
  } while (cursor !== '0');
}

const redisKind: StoreKind = {
  name: 'RedisSessionStore',
  async create(): Promise<StoreFixture> {
    // A prefix of its own per test: the tests share one server and never see each other's keys.
    const prefix = `contract-${randomUUID()}:`;
    const raw = new Redis(server.connection);
    const opened: SessionStore[] = [];
    const open = () => {
      const store = new RedisSessionStore({ connection: server.connection, prefix });
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
        await removeKeys(raw, prefix);
        await raw.quit();
      },
    };
  },
};

describeSessionStoreContract([redisKind]);
describeJournalContract([redisKind]);
describeJournalDamage([redisKind]);

describe('RedisSessionStore: the session document from before the journal', () => {
  it('loads it, and moves it to the journal at its next save', async () => {
    const prefix = `legacy-${randomUUID()}:`;
    const raw = new Redis(server.connection);
    const store = new RedisSessionStore({ connection: server.connection, prefix });
    try {
      const document = readFileSync(new URL('./fixtures/session-format-1.txt', import.meta.url), 'utf8');
      await raw.set(`${prefix}session:legacy-chat`, document);
      await raw.zadd(`${prefix}sessions`, 0, 'legacy-chat');
      const loaded = await store.load('legacy-chat');
      expect(loaded?.version).toBe(4);
      expect(loaded?.state.toJSON()).toEqual(JSON.parse(document).state);
      expect(await store.checkpoints('legacy-chat')).toMatchObject([{ version: 4, stepNumber: 2 }]);
      expect((await store.fork('legacy-chat', 4, 'legacy-fork')).version).toBe(4);
      expect((await store.load('legacy-fork'))?.state.toJSON()).toEqual(JSON.parse(document).state);
      const next = (loaded as { state: AgentState }).state.withUserMessage('And Paris?');
      expect(await store.save('legacy-chat', next, 4)).toBe(5);
      expect(await raw.exists(`${prefix}session:legacy-chat`)).toBe(0);
      expect((await store.load('legacy-chat'))?.state.toJSON()).toEqual(next.toJSON());
      expect(await store.list()).toEqual(['legacy-chat', 'legacy-fork']);
    } finally {
      await store.close();
      await removeKeys(raw, prefix);
      await raw.quit();
    }
  });
});

describe('RedisSessionStore (Redis specifics)', () => {
  const stores: SessionStore[] = [];
  const open = (prefix: string) => {
    const store = new RedisSessionStore({ connection: server.connection, prefix });
    stores.push(store);
    return store;
  };
  afterAll(async () => {
    await Promise.all(stores.map((s) => s.close()));
  });

  it('appends one journal record per save to the list <prefix>{<id>}:journal, and writes no index', async () => {
    const prefix = `format-${randomUUID()}:`;
    const store = open(prefix);
    const state = AgentState.empty().withUserMessage('hello');
    await store.save('chat-1', state, null);
    await store.save('chat-1', state.withUserMessage('again'), 1);
    const raw = new Redis(server.connection);
    try {
      const records = (await raw.lrange(`${prefix}{chat-1}:journal`, 0, -1)).map((t) => JSON.parse(t));
      expect(records.map((r) => [r.journal, r.v, r.kind])).toEqual([
        [1, 1, 'snapshot'],
        [1, 2, 'delta'],
      ]);
      expect(records[1].sections.messages).toMatchObject({ from: 1, items: [{ content: 'again' }] });
      expect(await raw.exists(`${prefix}sessions`)).toBe(0);
      expect(store.journalKey('chat-1')).toBe(`${prefix}{chat-1}:journal`);
      expect(store.keys('chat-1')).toEqual({
        journal: `${prefix}{chat-1}:journal`,
        snapshot: `${prefix}{chat-1}:snapshot`,
        document: `${prefix}{chat-1}:session`,
      });
      expect(await store.list()).toEqual(['chat-1']);
    } finally {
      await raw.quit();
    }
  });

  it("idleTtlSeconds: each save sets the expiry of the session's keys; without it they never expire", async () => {
    const prefix = `ttl-${randomUUID()}:`;
    const store = new RedisSessionStore({ connection: server.connection, prefix, idleTtlSeconds: 3600 });
    stores.push(store);
    const kept = open(prefix);
    const raw = new Redis(server.connection);
    try {
      const v = await store.save('idle', AgentState.empty().withUserMessage('hi'), null);
      await store.save('idle', AgentState.empty().withUserMessage('hi').withUserMessage('again'), v);
      await store.fork('idle', 1, 'idle-fork');
      for (const key of [
        store.keys('idle').journal,
        store.keys('idle').snapshot,
        store.keys('idle-fork').journal,
      ]) {
        const ttl = await raw.ttl(key);
        expect(ttl, key).toBeGreaterThan(0);
        expect(ttl, key).toBeLessThanOrEqual(3600);
      }
      await kept.save('forever', AgentState.empty().withUserMessage('hi'), null);
      expect(await raw.ttl(kept.keys('forever').journal)).toBe(-1);
      expect(() => new RedisSessionStore({ connection: server.connection, idleTtlSeconds: 0 })).toThrow(
        /idleTtlSeconds/,
      );
    } finally {
      await raw.quit();
    }
  });

  it('keeps stores with different prefixes apart', async () => {
    const a = open(`a-${randomUUID()}:`);
    const b = open(`b-${randomUUID()}:`);
    await a.save('same-id', AgentState.empty().withUserMessage('in a'), null);
    expect(await b.load('same-id')).toBeNull();
    expect(await b.list()).toEqual([]);
    expect(await b.save('same-id', AgentState.empty().withUserMessage('in b'), null)).toBe(1);
    expect((await a.load('same-id'))?.state.messages()[0]?.content).toBe('in a');
  });

  it('reads a document from before the journal whose version is not first, and refuses one without a version', async () => {
    const prefix = `shape-${randomUUID()}:`;
    const store = open(prefix);
    const raw = new Redis(server.connection);
    try {
      const state = AgentState.empty().withUserMessage('x').toJSON();
      await raw.set(
        `${prefix}session:hand`,
        JSON.stringify({ savedAt: new Date().toISOString(), state, version: 3 }),
      );
      expect((await store.load('hand'))?.version).toBe(3);
      await expect(store.save('hand', AgentState.empty(), 2)).rejects.toMatchObject({
        code: 'SESSION_CONFLICT',
        actualVersion: 3,
      });
      expect(await store.save('hand', AgentState.empty(), 3)).toBe(4);
      // Moved to the journal by that save.
      expect(await raw.exists(`${prefix}session:hand`)).toBe(0);
      expect(await raw.llen(`${prefix}{hand}:journal`)).toBe(1);
      expect((await store.load('hand'))?.version).toBe(4);

      await raw.set(`${prefix}session:nover`, JSON.stringify({ savedAt: new Date().toISOString(), state }));
      const error = await store.save('nover', AgentState.empty(), 1).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(CorruptSessionError);
      expect((error as CorruptSessionError).problem).toContain('version is undefined');
    } finally {
      await raw.quit();
    }
  });

  it.each([
    ['past the list', '7'],
    ['not a number', 'seven'],
    ['negative', '-1'],
    ['gone', null],
  ])(
    'a journal whose snapshot position is %s is corrupt, never "no session" nor a Redis error',
    async (_, position) => {
      const prefix = `position-${randomUUID()}:`;
      const store = open(prefix);
      let version = await store.save('run', AgentState.empty().withUserMessage('go'), null);
      version = await store.save(
        'run',
        AgentState.empty().withUserMessage('go').withUserMessage('on'),
        version,
      );
      const raw = new Redis(server.connection);
      try {
        if (position === null) await raw.del(`${prefix}{run}:snapshot`);
        else await raw.set(`${prefix}{run}:snapshot`, position);
        const error = await open(prefix)
          .load('run')
          .catch((e: unknown) => e);
        expect(error).toBeInstanceOf(CorruptSessionError);
        expect(error).toMatchObject({ sessionId: 'run', location: `redis:${prefix}{run}:journal` });
        expect((error as CorruptSessionError).problem).toContain('snapshot position');
      } finally {
        await raw.quit();
      }
    },
  );

  it('serializes concurrent saves from many connections: one winner per version', async () => {
    const prefix = `race-${randomUUID()}:`;
    const writers = Array.from({ length: 8 }, () => open(prefix));
    await (writers[0] as SessionStore).save('race', AgentState.empty(), null);
    let version = 1;
    for (let round = 0; round < 5; round++) {
      const results = await Promise.allSettled(
        writers.map((w, i) => w.save('race', AgentState.empty().withUserMessage(`w${i}`), version)),
      );
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      version += 1;
    }
    expect((await (writers[3] as SessionStore).load('race'))?.version).toBe(6);
  });
});
