import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  CorruptSessionError,
  InvalidSessionIdError,
  SessionConflictError,
  type SessionStore,
  StoreClosedError,
} from '../../src/persistence/index';
import { AgentState } from '../../src/state/agent-state';
import { InvalidArgumentError } from '../../src/state/errors';
import {
  finishedState,
  inProgressState,
  type StoreFixture,
  type StoreKind,
  sealRecord,
  storeKinds,
} from './fixtures';

const BAD_IDS = ['../x', '', 'a/b', '..', '.', 'a\\b', '/abs', 'a b', 'x'.repeat(201), 'caf\u00e9'];

/**
 * The SessionStore contract for each of `kinds`. This file runs it for the built-in stores; other
 * test files import it for stores of their own (tests/persistence/redis-session-store.test.ts).
 */
export function describeSessionStoreContract(kinds: readonly StoreKind[]): void {
  describe.each(kinds)('$name (SessionStore contract)', contract);
}

const contract = (kind: StoreKind) => {
  let fixture: StoreFixture;
  let store: SessionStore;
  beforeEach(async () => {
    fixture = await kind.create();
    store = fixture.store;
  });
  afterEach(async () => {
    await fixture.cleanup();
  });

  describe('round trip and versions', () => {
    it('returns null for a session that was never saved', async () => {
      expect(await store.load('nobody')).toBeNull();
    });

    it('round-trips a finished execution with steps', async () => {
      const state = await finishedState();
      expect(state.stepCount()).toBe(2);
      expect(await store.save('chat-1', state, null)).toBe(1);
      const loaded = await store.load('chat-1');
      expect(loaded?.version).toBe(1);
      expect(loaded?.state).toBeInstanceOf(AgentState);
      expect(loaded?.state.toJSON()).toEqual(state.toJSON());
      expect(loaded?.state.finalResponse()).toBe('5');
      expect(loaded?.state.steps()[0]?.toolExecutions()[0]?.value()).toBe(5);
    });

    it('round-trips an execution in progress (a checkpoint after a recorded step)', async () => {
      const state = inProgressState(5);
      await store.save('run', state, null);
      const loaded = await store.load('run');
      expect(loaded?.state.toJSON()).toEqual(state.toJSON());
      expect(loaded?.state.status()).toBe('in_progress');
      expect(loaded?.state.stepCount()).toBe(5);
    });

    it('starts at version 1 and adds 1 per save; load returns the latest', async () => {
      let state = AgentState.empty().withUserMessage('turn 0');
      let version = await store.save('s', state, null);
      expect(version).toBe(1);
      for (let turn = 1; turn <= 4; turn++) {
        state = state.withUserMessage(`turn ${turn}`);
        const next = await store.save('s', state, version);
        expect(next).toBe(version + 1);
        version = next;
      }
      const loaded = await store.load('s');
      expect(loaded?.version).toBe(5);
      expect(loaded?.state.messages().map((m) => m.content)).toEqual([
        'turn 0',
        'turn 1',
        'turn 2',
        'turn 3',
        'turn 4',
      ]);
    });

    it('is durable: another store over the same storage sees the sessions', async () => {
      const state = await finishedState();
      const more = state.forNextExecution().withUserMessage('more');
      await store.save('kept', state, null);
      await store.save('kept', more, 1);
      const again = fixture.reopen();
      const loaded = await again.load('kept');
      expect(loaded?.version).toBe(2);
      expect(loaded?.state.toJSON()).toEqual(more.toJSON());
      expect(await again.list()).toEqual(['kept']);
    });

    it('keeps sessions apart', async () => {
      await store.save('a', AgentState.empty().withUserMessage('for a'), null);
      await store.save('b', AgentState.empty().withUserMessage('for b'), null);
      expect((await store.load('a'))?.state.messages()[0]?.content).toBe('for a');
      expect((await store.load('b'))?.state.messages()[0]?.content).toBe('for b');
      expect((await store.load('b'))?.version).toBe(1);
    });
  });

  describe('optimistic concurrency', () => {
    it('refuses a stale version, names both versions and writes nothing', async () => {
      const first = AgentState.empty().withUserMessage('first');
      await store.save('s', first, null);
      await store.save('s', first.withUserMessage('second'), 1);
      const before = await fixture.readRaw('s');
      const error = await store.save('s', first.withUserMessage('stale'), 1).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(SessionConflictError);
      expect(error).toMatchObject({
        code: 'SESSION_CONFLICT',
        sessionId: 's',
        expectedVersion: 1,
        actualVersion: 2,
      });
      expect((error as Error).message).toContain('"s" is at version 2, not the expected 1');
      expect((error as Error).message).toContain('save with expectedVersion 2');
      expect(await fixture.readRaw('s')).toBe(before);
      expect((await store.load('s'))?.version).toBe(2);
    });

    it('refuses a version ahead of the stored one', async () => {
      await store.save('s', AgentState.empty(), null);
      await expect(store.save('s', AgentState.empty(), 7)).rejects.toMatchObject({
        code: 'SESSION_CONFLICT',
        expectedVersion: 7,
        actualVersion: 1,
      });
    });

    it('refuses to create a session that exists (expectedVersion null)', async () => {
      const original = AgentState.empty().withUserMessage('original');
      await store.save('s', original, null);
      await store.save('s', original, 1);
      const before = await fixture.readRaw('s');
      const error = await store.save('s', AgentState.empty(), null).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(SessionConflictError);
      expect(error).toMatchObject({ sessionId: 's', expectedVersion: null, actualVersion: 2 });
      expect((error as Error).message).toContain('already exists (version 2)');
      expect(await fixture.readRaw('s')).toBe(before);
    });

    it('refuses to update a session that does not exist, and creates nothing', async () => {
      const error = await store.save('ghost', AgentState.empty(), 3).catch((e: unknown) => e);
      expect(error).toMatchObject({
        code: 'SESSION_CONFLICT',
        sessionId: 'ghost',
        expectedVersion: 3,
        actualVersion: null,
      });
      expect((error as Error).message).toContain('Create it with expectedVersion null');
      expect(await store.load('ghost')).toBeNull();
      expect(await store.list()).toEqual([]);
    });

    it('lets exactly one of concurrent saves with the same expected version win', async () => {
      await store.save('race', AgentState.empty().withUserMessage('start'), null);
      const candidates = Array.from({ length: 6 }, (_, i) =>
        AgentState.empty().withUserMessage(`writer ${i}`),
      );
      const results = await Promise.allSettled(candidates.map((state) => store.save('race', state, 1)));
      const won = results.flatMap((r, i) => (r.status === 'fulfilled' ? [{ i, version: r.value }] : []));
      expect(won).toHaveLength(1);
      expect(won[0]?.version).toBe(2);
      for (const result of results) {
        if (result.status === 'rejected') {
          expect(result.reason).toBeInstanceOf(SessionConflictError);
          expect(result.reason).toMatchObject({ expectedVersion: 1, actualVersion: 2 });
        }
      }
      const loaded = await store.load('race');
      expect(loaded?.version).toBe(2);
      expect(loaded?.state.messages()[0]?.content).toBe(`writer ${won[0]?.i}`);
    });

    it('lets exactly one of concurrent creates win, across two stores over the same storage', async () => {
      const other = fixture.reopen();
      const results = await Promise.allSettled([
        store.save('new', AgentState.empty().withUserMessage('one'), null),
        other.save('new', AgentState.empty().withUserMessage('two'), null),
        store.save('new', AgentState.empty().withUserMessage('three'), null),
      ]);
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      expect(
        results.filter((r) => r.status === 'rejected').map((r) => (r as PromiseRejectedResult).reason.code),
      ).toEqual(['SESSION_CONFLICT', 'SESSION_CONFLICT']);
      expect((await store.load('new'))?.version).toBe(1);
    });

    it('serializes a chain of concurrent saves that each name the previous version', async () => {
      await store.save('chain', AgentState.empty(), null);
      const versions = await Promise.all(
        [1, 2, 3, 4].map((v) => store.save('chain', AgentState.empty().withUserMessage(`v${v}`), v)),
      );
      expect(versions).toEqual([2, 3, 4, 5]);
      expect((await store.load('chain'))?.state.messages()[0]?.content).toBe('v4');
    });
  });

  describe('list and delete', () => {
    it('lists saved sessions, sorted, and forgets deleted ones', async () => {
      expect(await store.list()).toEqual([]);
      for (const id of ['zeta', 'alpha', 'Mid.1', 'a_b-c']) await store.save(id, AgentState.empty(), null);
      expect(await store.list()).toEqual(['Mid.1', 'a_b-c', 'alpha', 'zeta']);
      await store.delete('alpha');
      expect(await store.list()).toEqual(['Mid.1', 'a_b-c', 'zeta']);
      expect(await store.load('alpha')).toBeNull();
      expect((await store.load('zeta'))?.version).toBe(1);
    });

    it('deleting a missing session does nothing; a deleted id can be created again at version 1', async () => {
      await store.delete('never-saved');
      await store.save('s', AgentState.empty(), null);
      await store.save('s', AgentState.empty(), 1);
      await store.delete('s');
      await expect(store.save('s', AgentState.empty(), 2)).rejects.toMatchObject({ actualVersion: null });
      expect(await store.save('s', AgentState.empty(), null)).toBe(1);
    });
  });

  describe('bad input', () => {
    it.each(BAD_IDS)('refuses the session id %j in every method', async (id) => {
      for (const call of [
        () => store.load(id),
        () => store.save(id, AgentState.empty(), null),
        () => store.delete(id),
      ]) {
        const error = await call().catch((e: unknown) => e);
        expect(error).toBeInstanceOf(InvalidSessionIdError);
        expect(error).toMatchObject({ code: 'INVALID_SESSION_ID', sessionId: id });
        expect((error as Error).message).toContain(
          JSON.stringify(id.length > 60 ? `${id.slice(0, 60)}...` : id),
        );
      }
      expect(await store.list()).toEqual([]);
    });

    it('accepts ids at the edges of the rules', async () => {
      const ids = ['x'.repeat(200), '.hidden', 'a..b', '...', '-', '_'];
      for (const id of ids) await store.save(id, AgentState.empty(), null);
      expect(await store.list()).toEqual([...ids].sort());
    });

    it('refuses an expectedVersion that is not null or a positive integer', async () => {
      await store.save('s', AgentState.empty(), null);
      for (const bad of [0, -1, 1.5, Number.NaN, undefined, '1']) {
        const error = await store.save('s', AgentState.empty(), bad as number).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(InvalidArgumentError);
        expect((error as Error).message).toContain('expectedVersion');
      }
      expect((await store.load('s'))?.version).toBe(1);
    });

    it('refuses a state that is not an AgentState', async () => {
      const error = await store
        .save('s', AgentState.empty().toJSON() as never, null)
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidArgumentError);
      expect(await store.load('s')).toBeNull();
    });
  });

  describe('corrupt data', () => {
    type Damage = (f: StoreFixture, id: string) => Promise<void>;
    const editRecord = async (
      f: StoreFixture,
      id: string,
      edit: (record: Record<string, unknown>) => void,
    ) => {
      const record = JSON.parse(await f.readRecord(id));
      edit(record);
      await f.writeRecord(id, sealRecord(record));
    };
    const damage: Record<string, Damage> = {
      'a record cut short': async (f, id) => {
        const text = await f.readRecord(id);
        await f.writeRecord(id, text.slice(0, Math.floor(text.length / 2)));
      },
      'journal format version 99': (f, id) =>
        editRecord(f, id, (record) => {
          record.journal = 99;
        }),
      'a state with a bad field': (f, id) =>
        editRecord(f, id, (record) => {
          const steps = record.steps as {
            items: { step: { inferenceResponse: { usage: { inputTokens: unknown } } } }[];
          };
          (steps.items[0] as (typeof steps.items)[0]).step.inferenceResponse.usage.inputTokens = 'many';
        }),
      'a reference to content it does not hold': (f, id) =>
        editRecord(f, id, (record) => {
          record.content = {};
        }),
    };
    const expected: Record<string, { problem: RegExp; path: string | null }> = {
      'a record cut short': { problem: /a journal record is not valid JSON/, path: null },
      'journal format version 99': {
        problem:
          /journal has format version 99, and this agent-machine reads format version 1 .*newer agent-machine/,
        path: 'journal',
      },
      'a state with a bad field': {
        problem:
          /Invalid AgentState at execution\.stepExecutions\[0\]\.step\.inferenceResponse\.usage\.inputTokens/,
        path: 'execution.stepExecutions[0].step.inferenceResponse.usage.inputTokens',
      },
      'a reference to content it does not hold': {
        problem: /refers to content "[\w-]+" that it does not hold/,
        path: null,
      },
    };
    /** A finished execution whose tool result is long enough to be stored as content. */
    const longResultState = () => finishedState(`What is 2 + 3? ${'Show your work. '.repeat(20)}`);

    it.each(Object.keys(damage))(
      '%s: load raises CorruptSessionError naming the session; the rest is intact',
      async (kindOfDamage) => {
        const good = await finishedState('What is 1 + 1?', '2');
        await store.save('good', good, null);
        await store.save('bad', await longResultState(), null);
        await (damage[kindOfDamage] as Damage)(fixture, 'bad');
        const damaged = await fixture.readRaw('bad');

        const error = await store.load('bad').catch((e: unknown) => e);
        expect(error).toBeInstanceOf(CorruptSessionError);
        const corrupt = error as CorruptSessionError;
        const { problem, path } = expected[kindOfDamage] as { problem: RegExp; path: string | null };
        expect(corrupt.code).toBe('SESSION_CORRUPT');
        expect(corrupt.sessionId).toBe('bad');
        expect(corrupt.path).toBe(path);
        expect(corrupt.problem).toMatch(problem);
        expect(corrupt.message).toContain('Session "bad" is corrupt');
        expect(corrupt.message).toMatch(problem);
        expect(corrupt.message).toContain('store.delete("bad")');

        // A load never repairs or overwrites; the other session still loads; list still works.
        await store.load('bad').catch(() => undefined);
        expect(await fixture.readRaw('bad')).toBe(damaged);
        expect((await store.load('good'))?.state.toJSON()).toEqual(good.toJSON());
        expect(await store.list()).toEqual(['bad', 'good']);
        // Deleting is the way out: the id can then be created afresh.
        await store.delete('bad');
        expect(await store.save('bad', good, null)).toBe(1);
        expect((await store.load('bad'))?.state.finalResponse()).toBe('2');
      },
    );

    it.each(Object.keys(damage))(
      '%s: after the failed load, a save naming the stored version writes the whole state again',
      async (kindOfDamage) => {
        await store.save('s', await longResultState(), null);
        await (damage[kindOfDamage] as Damage)(fixture, 's');
        await expect(store.load('s')).rejects.toBeInstanceOf(CorruptSessionError);
        await expect(store.save('s', AgentState.empty(), 2)).rejects.toBeInstanceOf(SessionConflictError);
        const repaired = AgentState.empty().withUserMessage('repaired');
        expect(await store.save('s', repaired, 1)).toBe(2);
        expect((await store.load('s'))?.state.toJSON()).toEqual(repaired.toJSON());
      },
    );
  });

  describe('close', () => {
    it('refuses every operation after close; close twice is fine', async () => {
      await store.save('s', AgentState.empty(), null);
      await store.close();
      await store.close();
      for (const call of [
        () => store.load('s'),
        () => store.save('s', AgentState.empty(), 1),
        () => store.delete('s'),
        () => store.list(),
      ]) {
        const error = await call().catch((e: unknown) => e);
        expect(error).toBeInstanceOf(StoreClosedError);
        expect(error).toMatchObject({ code: 'STORE_CLOSED' });
      }
      expect((await fixture.reopen().load('s'))?.version).toBe(1);
    });

    it('lets operations already started finish', async () => {
      const saving = store.save('s', await finishedState(), null);
      await store.close();
      expect(await saving).toBe(1);
      expect((await fixture.reopen().load('s'))?.version).toBe(1);
    });
  });
};

// Only as its own test file: a file that imports describeSessionStoreContract runs it for its stores.
if (expect.getState().testPath === fileURLToPath(import.meta.url)) describeSessionStoreContract(storeKinds);
