import { fileURLToPath } from 'node:url';
import { crc32 } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CorruptSessionError } from '../../src/persistence/errors';
import type { JournaledSessionStore } from '../../src/persistence/index';
import { AgentState } from '../../src/state/agent-state';
import { appendStep, type StoreFixture, type StoreKind, sealRecord, storeKinds } from './fixtures';

const started = () => AgentState.empty().withSystemPrompt('s').withUserMessage('go').withExecutionStarted();

/** Saves `started()` and then `steps` steps, one save per step; returns the states by version. */
async function saveSteps(store: JournaledSessionStore, id: string, steps: number) {
  const saved: AgentState[] = [];
  let state = started();
  let version = await store.save(id, state, null);
  saved[version] = state;
  for (let n = 0; n < steps; n++) {
    state = appendStep(state, n);
    version = await store.save(id, state, version);
    saved[version] = state;
  }
  return saved;
}

async function loadError(store: JournaledSessionStore, id: string): Promise<CorruptSessionError> {
  const error = await store.load(id).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(CorruptSessionError);
  return error as CorruptSessionError;
}

/**
 * What a load does with records a buggy writer could have written (their checksums are right),
 * and what a fork's generation means for a writer that remembers the session it replaced
 * (issue 32: R4, R5). Other test files import it for stores of their own.
 */
export function describeJournalDamage(kinds: readonly StoreKind[]): void {
  describe.each(kinds)('$name (records that do not follow)', damage);
}

/** The parts of a record the tests below edit. */
interface EditedRecord extends Record<string, unknown> {
  step: number;
  steps: { from: number };
  sections: { messages: { from: number } };
  head: Record<string, unknown> & { execution?: { status: string } };
}

const damage = (kind: StoreKind) => {
  let fixture: StoreFixture;
  let store: JournaledSessionStore;
  beforeEach(async () => {
    fixture = await kind.create();
    store = fixture.store as JournaledSessionStore;
  });
  afterEach(async () => {
    await fixture.cleanup();
  });

  const editLast = async (edit: (record: EditedRecord) => void) => {
    const record = JSON.parse(await fixture.readRecord('run')) as EditedRecord;
    edit(record);
    await fixture.writeRecord('run', sealRecord(record));
  };

  it('refuses a delta whose steps do not start at the current length (or 0)', async () => {
    await saveSteps(store, 'run', 3);
    await editLast((record) => {
      expect(record.steps.from).toBe(2);
      record.steps.from = 1;
      record.step = 2; // so that only the start of the run is wrong
    });
    const error = await loadError(fixture.reopen() as JournaledSessionStore, 'run');
    expect(error.problem).toMatch(/journal record 4 appends to steps after item 1, but there are 2/);
  });

  it('refuses a delta whose messages do not start at the current length (or 0)', async () => {
    await saveSteps(store, 'run', 3);
    await editLast((record) => {
      const messages = record.sections.messages;
      expect(messages.from).toBeGreaterThan(1);
      messages.from -= 1;
    });
    const error = await loadError(fixture.reopen() as JournaledSessionStore, 'run');
    expect(error.problem).toMatch(
      /journal record 4 appends to sections\.messages after item \d+, but there are \d+/,
    );
  });

  it('refuses a record whose step count is not the steps it leaves', async () => {
    await saveSteps(store, 'run', 3);
    await editLast((record) => {
      record.step = 2;
    });
    const error = await loadError(fixture.reopen() as JournaledSessionStore, 'run');
    expect(error.problem).toMatch(/journal record 4 says 2 steps, but its steps make 3/);
  });

  it('refuses a head field it does not know (a damaged name would revert the status)', async () => {
    const saved = await saveSteps(store, 'run', 2);
    await store.save('run', (saved[3] as AgentState).withExecutionCompleted(), 3);
    await editLast((record) => {
      expect(record.head.execution?.status).toBe('completed');
      record.head.executiom = record.head.execution;
      delete record.head.execution;
    });
    const error = await loadError(fixture.reopen() as JournaledSessionStore, 'run');
    expect(error.problem).toMatch(/journal record 4 has an unknown head field "executiom"/);
  });

  it('refuses a sealed record holding a value nested deeper than a state may hold (no RangeError)', async () => {
    await saveSteps(store, 'run', 2);
    const record = JSON.parse(await fixture.readRecord('run')) as EditedRecord;
    record.head.metadata = { x: 'DEEP' };
    // Built as text: JSON.stringify itself cannot write a value this deep.
    const deep = `${'{"a":'.repeat(20_000)}1${'}'.repeat(20_000)}`;
    const sealed = sealRecord(record).replace('"DEEP"', deep);
    const text = sealed.replace(/,"crc":\d+\}$/, '}');
    await fixture.writeRecord('run', `${text.slice(0, -1)},"crc":${crc32(text)}}`);
    const error = await loadError(fixture.reopen() as JournaledSessionStore, 'run');
    expect(error.problem).toMatch(/metadata\.x.*nested more than/);
  });

  it('a fork has a generation of its own: a writer that knew the session it replaced writes a snapshot', async () => {
    // X at version 2; Y forked from it (the same records).
    const saved = await saveSteps(store, 'X', 1);
    await store.fork('X', 2, 'Y');
    // A writer saves X's version 3 and remembers it.
    const writer = fixture.reopen() as JournaledSessionStore;
    const x = await writer.load('X');
    const x3 = appendStep(x?.state as AgentState, 10);
    expect(await writer.save('X', x3, 2)).toBe(3);
    // Another writer saves Y's version 3, a different state.
    const other = fixture.reopen() as JournaledSessionStore;
    const y = await other.load('Y');
    expect(await other.save('Y', appendStep(y?.state as AgentState, 20), 2)).toBe(3);
    // X is deleted and Y forked onto it at version 3.
    await store.delete('X');
    await store.fork('Y', 3, 'X');
    // The first writer still holds X's version 3: its save is at the right version, and must
    // not be a delta from its own version 3 onto Y's.
    const x4 = appendStep(x3, 11);
    expect(await writer.save('X', x4, 3)).toBe(4);
    const loaded = await (fixture.reopen() as JournaledSessionStore).load('X');
    expect(loaded?.state.toJSON()).toEqual(x4.toJSON());
    expect(saved[2]).toBeDefined();
  });
};

// Only as its own test file: a file that imports describeJournalDamage runs it for its stores.
if (expect.getState().testPath === fileURLToPath(import.meta.url)) describeJournalDamage(storeKinds);
