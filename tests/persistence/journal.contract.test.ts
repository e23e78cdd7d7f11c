import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  CheckpointNotFoundError,
  type JournaledSessionStore,
  SessionConflictError,
  SessionNotFoundError,
} from '../../src/persistence/index';
import { AgentState } from '../../src/state/agent-state';
import { AgentStep, InferenceResponse } from '../../src/state/agent-step';
import { InvalidArgumentError } from '../../src/state/errors';
import { Message } from '../../src/state/message';
import { ToolExecution } from '../../src/state/tool-execution';
import { Usage } from '../../src/state/usage';
import { type StoreFixture, type StoreKind, sealRecord, storeKinds } from './fixtures';

/** A ~1 KiB tool result, different for every step. */
const result = (n: number) => `result ${n}: ${`${n * 7919} `.repeat(200)}`.slice(0, 1024);

/** Appends one recorded step whose tool returned `result(n)`. */
function withStep(state: AgentState, n: number): AgentState {
  const call = { id: `call-${n}`, name: 'lookup', args: { n } };
  const step = AgentStep.of({
    inputMessages: state.messageList(),
    outputMessages: [Message.assistant('', [call]), Message.toolResult(call, result(n))],
    inferenceResponse: InferenceResponse.of({
      toolCalls: [call],
      finishReason: 'tool-calls',
      usage: Usage.of({ inputTokens: 10, outputTokens: 5 }),
    }),
    toolExecutions: [ToolExecution.succeeded(call, result(n), 0, 1)],
  });
  return state.withStepStarted().withCurrentStep(step).withCurrentStepRecorded();
}

const started = () => AgentState.empty().withSystemPrompt('s').withUserMessage('go').withExecutionStarted();

/** Saves `state` then `steps` steps after it, one save per step; returns every saved state by version. */
async function saveSteps(store: JournaledSessionStore, id: string, steps: number, from = started()) {
  const saved = new Map<number, AgentState>();
  let state = from;
  let version = await store.save(id, state, null);
  saved.set(version, state);
  for (let n = 0; n < steps; n++) {
    state = withStep(state, n);
    version = await store.save(id, state, version);
    saved.set(version, state);
  }
  return saved;
}

const kindOf = (text: string) => (JSON.parse(text) as { kind: string }).kind;

/**
 * The journal under every store (issue 21): what a checkpoint appends, content stored once, the
 * snapshots, and time travel (checkpoints, loadCheckpoint, fork). Other test files import it for
 * stores of their own (tests/persistence/redis-session-store.test.ts).
 */
export function describeJournalContract(kinds: readonly StoreKind[]): void {
  describe.each(kinds)('$name (checkpoint journal)', journal);
}

const journal = (kind: StoreKind) => {
  let fixture: StoreFixture;
  let store: JournaledSessionStore;
  beforeEach(async () => {
    fixture = await kind.create();
    store = fixture.store as JournaledSessionStore;
  });
  afterEach(async () => {
    await fixture.cleanup();
  });

  describe('appending', () => {
    it('appends a snapshot, then one delta per step whose size does not grow with the history', async () => {
      const sizes: number[] = [];
      let state = started();
      let version = await store.save('run', state, null);
      for (let n = 0; n < 40; n++) {
        state = withStep(state, n);
        version = await store.save('run', state, version);
        sizes.push((await fixture.readRecord('run')).length);
      }
      const records = await fixture.readRecords('run');
      expect(records.map(kindOf)).toEqual(['snapshot', ...Array.from({ length: 40 }, () => 'delta')]);
      // Step 40's delta is no bigger than step 5's but for the digits of the larger numbers in it.
      expect(sizes[39] as number).toBeLessThan((sizes[4] as number) * 1.05);
      expect((await store.load('run'))?.state.toJSON()).toEqual(state.toJSON());
    });

    it('stores a tool result once, though the state holds it in three places', async () => {
      const saved = await saveSteps(store, 'run', 6);
      const records = (await fixture.readRecords('run')).join('\n');
      for (let n = 0; n < 6; n++) expect(records.split(result(n)).length - 1).toBe(1);
      const state = saved.get(7) as AgentState;
      const last = state.lastStep();
      expect(last?.toolExecutions()[0]?.value()).toBe(result(5));
      expect(state.messages().at(-1)?.content).toBe(result(5));
      expect((await store.load('run'))?.state.toJSON()).toEqual(state.toJSON());
    });

    it('starts each new execution of a session with a delta', async () => {
      let state = AgentState.empty().withUserMessage('turn 0');
      let version = await store.save('chat', state, null);
      for (let turn = 1; turn <= 5; turn++) {
        state = state.withExecutionStarted();
        for (let n = 0; n < 2; n++) state = withStep(state, turn * 10 + n);
        state = state.withExecutionCompleted().forNextExecution().withUserMessage(`turn ${turn}`);
        version = await store.save('chat', state, version);
      }
      expect((await fixture.readRecords('chat')).map(kindOf)).toEqual([
        'snapshot',
        ...Array.from({ length: 5 }, () => 'delta'),
      ]);
      expect((await fixture.reopen().load('chat'))?.state.toJSON()).toEqual(state.toJSON());
    });

    it('writes every record as the JSON of its parsed form, keys in the format order, sealed by its CRC', async () => {
      let state = started();
      let version = await store.save('mixed', state, null);
      for (let turn = 1; turn <= 14; turn++) {
        state = withStep(state, turn);
        // a rewritten section: its superseded bytes end in a snapshot (JOURNAL_FORMAT.md)
        const summary = Message.user(`summary ${turn}: ${'what happened so far, "quoted" é\n'.repeat(300)}`);
        state = state.withContext(
          state.context().withStore(state.store().withSectionReplaced([summary], 'summary')),
        );
        if (turn % 5 === 0)
          state = state
            .withExecutionCompleted()
            .forNextExecution()
            .withSystemPrompt(`prompt ${turn}`)
            .withUserMessage(`turn ${turn}`)
            .withExecutionStarted();
        version = await store.save('mixed', state, version);
      }
      const texts = await fixture.readRecords('mixed');
      expect(new Set(texts.map(kindOf))).toEqual(new Set(['snapshot', 'delta']));
      expect(texts.slice(1).map(kindOf)).toContain('snapshot');
      const order = [
        'journal',
        'v',
        'gen',
        'at',
        'step',
        'kind',
        'head',
        'steps',
        'sections',
        'content',
        'acct',
        'crc',
      ];
      for (const text of texts) {
        const record = JSON.parse(text) as Record<string, unknown>;
        expect(sealRecord(record)).toBe(text);
        const keys = Object.keys(record);
        expect(keys).toEqual(order.filter((key) => keys.includes(key)));
      }
      expect((await fixture.reopen().load('mixed'))?.state.toJSON()).toEqual(state.toJSON());
    });

    it('writes a setting into a delta when it changed, and only then (system prompt, llmConfig, metadata, response format)', async () => {
      const prompt = `You are careful. ${'Mind the details. '.repeat(100)}`;
      let state = started().withSystemPrompt(prompt).withLlmConfig({ model: 'a', temperature: 0.1 });
      let version = await store.save('settings', state, null);
      const changes: ((s: AgentState) => AgentState)[] = [
        (s) => withStep(s, 1),
        (s) => withStep(s, 2).withLlmConfig({ model: 'b', temperature: 0.1 }),
        (s) => withStep(s, 3).withMetadata('turn', 3),
        (s) => withStep(s, 4).withSystemPrompt(`${prompt}Be brief.`),
        (s) => withStep(s, 5).withResponseFormat({ type: 'json', schema: { type: 'object' } }),
        (s) => withStep(s, 6).withSystemPrompt(`${prompt}Be brief.`),
      ];
      for (const change of changes) {
        state = change(state);
        version = await store.save('settings', state, version);
      }
      const heads = (await fixture.readRecords('settings'))
        .slice(1)
        .map((text) =>
          Object.keys((JSON.parse(text) as { head: object }).head).filter(
            (k) => k !== 'updatedAt' && k !== 'execution',
          ),
        );
      expect(heads).toEqual([[], ['llmConfig'], ['metadata'], ['systemPrompt'], ['responseFormat'], []]);
      expect((await fixture.reopen().load('settings'))?.state.toJSON()).toEqual(state.toJSON());
    });

    it('writes a snapshot once the superseded records outweigh the live ones, so a load reads a short tail', async () => {
      let state = AgentState.empty().withUserMessage('go');
      let version = await store.save('notes', state, null);
      // A section rewritten at every save (as a summary is): each rewrite supersedes the last.
      for (let turn = 1; turn <= 12; turn++) {
        const summary = Message.user(
          `summary ${turn}: ${'a long summary of everything so far. '.repeat(300)}`,
        );
        state = state.withContext(
          state.context().withStore(state.store().withSectionReplaced([summary], 'summary')),
        );
        version = await store.save('notes', state, version);
      }
      const kinds = (await fixture.readRecords('notes')).map(kindOf);
      expect(kinds[1]).toBe('delta');
      expect(kinds.lastIndexOf('snapshot')).toBeGreaterThan(1);
      expect((await fixture.reopen().load('notes'))?.state.toJSON()).toEqual(state.toJSON());
      // Checkpoints before the snapshot are still there.
      expect((await store.loadCheckpoint('notes', 2))?.state.store().section('summary')[0]?.content).toMatch(
        /^summary 1: /,
      );
    });

    it('writes a snapshot when another store saved in between, so its own record never builds on one it did not see', async () => {
      const saved = await saveSteps(store, 'run', 2);
      const other = fixture.reopen() as JournaledSessionStore;
      const loaded = await other.load('run');
      await other.save('run', withStep(loaded?.state as AgentState, 50), loaded?.version as number);
      const mine = withStep(saved.get(3) as AgentState, 60);
      await expect(store.save('run', mine, 3)).rejects.toBeInstanceOf(SessionConflictError);
      expect(await store.save('run', mine, 4)).toBe(5);
      expect(kindOf(await fixture.readRecord('run'))).toBe('snapshot');
      expect((await other.load('run'))?.state.toJSON()).toEqual(mine.toJSON());
    });

    it('writes a snapshot when the session was deleted and made again elsewhere at the same version', async () => {
      const saved = await saveSteps(store, 'run', 2);
      const other = fixture.reopen();
      await other.delete('run');
      await saveSteps(
        other as JournaledSessionStore,
        'run',
        2,
        AgentState.empty().withUserMessage('elsewhere'),
      );
      const mine = withStep(saved.get(3) as AgentState, 70);
      expect(await store.save('run', mine, 3)).toBe(4);
      expect((await other.load('run'))?.state.toJSON()).toEqual(mine.toJSON());
    });
  });

  describe('every field of a step', () => {
    /** A step with every optional field the model driver records set, each value different. */
    const fullStep = (state: AgentState, n: number) => {
      const call = { id: `call-${n}`, name: 'lookup', args: { n } };
      return AgentStep.of({
        inputMessages: state.messageList(),
        outputMessages: [Message.assistant('', [call]), Message.toolResult(call, result(n))],
        inferenceResponse: InferenceResponse.of({
          toolCalls: [call],
          finishReason: 'tool-calls',
          usage: Usage.of({ inputTokens: 10 + n, outputTokens: 5 }),
          model: `model-${n}`,
          rawFinishReason: 'tool_calls',
          providerMetadata: { provider: { requestId: `r-${n}` } },
        }),
        toolExecutions: [ToolExecution.succeeded(call, result(n), 0, 1)],
        structuredOutput: { answer: n },
      }).withRequest({ system: `s${n}`, tools: `t${n}`, settings: `o${n}` });
    };
    const withFullStep = (state: AgentState, n: number) =>
      state.withStepStarted().withCurrentStep(fullStep(state, n)).withCurrentStepRecorded();

    /** Every path of keys in a JSON value, so that a dropped field shows by name. */
    const keyPaths = (value: unknown, at = ''): string[] =>
      value !== null && typeof value === 'object'
        ? Object.entries(value).flatMap(([k, v]) => [`${at}.${k}`, ...keyPaths(v, `${at}.${k}`)])
        : [];

    it('keeps every key of step.toJSON() through a snapshot, deltas and a step awaiting approval', async () => {
      let state = withFullStep(started(), 0);
      let version = await store.save('full', state, null);
      const saved = new Map([[version, state]]);
      for (let n = 1; n < 3; n++) {
        state = withFullStep(state, n);
        version = await store.save('full', state, version);
        saved.set(version, state);
      }
      const waiting = state
        .withStepStarted()
        .withCurrentStep(fullStep(state, 3))
        .withApprovalRequested(['call-3']);
      version = await store.save('full', waiting, version);
      saved.set(version, waiting);

      for (const [v, expected] of saved) {
        const reopened = fixture.reopen() as JournaledSessionStore;
        const loaded = (await reopened.loadCheckpoint('full', v))?.state;
        const steps = expected.execution()?.stepExecutions() ?? [];
        expect(steps.length).toBeGreaterThan(0);
        steps.forEach((s, i) => {
          const got = loaded?.execution()?.stepExecutions()[i];
          expect(keyPaths(got?.toJSON())).toEqual(keyPaths(s.toJSON()));
          expect(got?.step().toJSON()).toEqual(s.step().toJSON());
        });
        expect(loaded?.toJSON()).toEqual(expected.toJSON());
      }
      const current = (await store.load('full'))?.state.execution()?.currentStep();
      expect(current?.request()).toEqual({ system: 's3', tools: 't3', settings: 'o3' });
      expect(current?.inferenceResponse().rawFinishReason).toBe('tool_calls');
    });
  });

  describe('time travel', () => {
    it('lists the checkpoints with version, step number and time, oldest first', async () => {
      const before = Date.now();
      await saveSteps(store, 'run', 3);
      const checkpoints = await store.checkpoints('run');
      expect(checkpoints.map((c) => [c.version, c.stepNumber])).toEqual([
        [1, 0],
        [2, 1],
        [3, 2],
        [4, 3],
      ]);
      for (const checkpoint of checkpoints) {
        expect(checkpoint.savedAt).toBeInstanceOf(Date);
        expect(checkpoint.savedAt.getTime()).toBeGreaterThanOrEqual(before - 1000);
      }
      expect(await store.checkpoints('nobody')).toEqual([]);
    });

    it('loads any checkpoint as it was saved', async () => {
      const saved = await saveSteps(store, 'run', 5);
      for (const [version, state] of saved) {
        const loaded = await store.loadCheckpoint('run', version);
        expect(loaded?.version).toBe(version);
        expect(loaded?.state.toJSON()).toEqual(state.toJSON());
      }
      expect(await store.loadCheckpoint('nobody', 1)).toBeNull();
      await expect(store.loadCheckpoint('run', 7)).rejects.toBeInstanceOf(CheckpointNotFoundError);
      await expect(store.loadCheckpoint('run', 0)).rejects.toBeInstanceOf(InvalidArgumentError);
    });

    it('forks a new session from a checkpoint; the fork and the original go on apart', async () => {
      const saved = await saveSteps(store, 'run', 4);
      const forked = await store.fork('run', 3, 'retry');
      expect(forked.version).toBe(3);
      expect(forked.state.toJSON()).toEqual(saved.get(3)?.toJSON());
      expect((await store.load('retry'))?.state.toJSON()).toEqual(saved.get(3)?.toJSON());
      expect((await store.checkpoints('retry')).map((c) => c.version)).toEqual([1, 2, 3]);

      const retried = withStep(forked.state, 99);
      expect(await store.save('retry', retried, 3)).toBe(4);
      expect((await store.load('retry'))?.state.toJSON()).toEqual(retried.toJSON());
      expect((await store.load('run'))?.state.toJSON()).toEqual(saved.get(5)?.toJSON());
      expect(await store.list()).toEqual(['retry', 'run']);
      // Deleting the original leaves the fork whole.
      await store.delete('run');
      expect((await fixture.reopen().load('retry'))?.state.toJSON()).toEqual(retried.toJSON());
    });

    it('refuses a fork onto an existing session, from a missing one, or from a missing version', async () => {
      await saveSteps(store, 'run', 2);
      await store.save('taken', AgentState.empty(), null);
      await expect(store.fork('run', 2, 'taken')).rejects.toBeInstanceOf(SessionConflictError);
      await expect(store.fork('nobody', 1, 'new')).rejects.toBeInstanceOf(SessionNotFoundError);
      await expect(store.fork('run', 9, 'new')).rejects.toBeInstanceOf(CheckpointNotFoundError);
      expect(await store.list()).toEqual(['run', 'taken']);
    });

    it('refuses a bad session id or version in checkpoints, loadCheckpoint and fork, and writes nothing', async () => {
      await saveSteps(store, 'run', 2);
      for (const id of ['../run', 'a\u0000b', 'x'.repeat(201), '..']) {
        await expect(store.checkpoints(id)).rejects.toMatchObject({ code: 'INVALID_SESSION_ID' });
        await expect(store.loadCheckpoint(id, 1)).rejects.toMatchObject({ code: 'INVALID_SESSION_ID' });
        await expect(store.fork(id, 1, 'new')).rejects.toMatchObject({ code: 'INVALID_SESSION_ID' });
        await expect(store.fork('run', 1, id)).rejects.toMatchObject({ code: 'INVALID_SESSION_ID' });
      }
      for (const version of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, '1']) {
        await expect(store.loadCheckpoint('run', version as number)).rejects.toMatchObject({
          code: 'INVALID_ARGUMENT',
        });
        await expect(store.fork('run', version as number, 'new')).rejects.toMatchObject({
          code: 'INVALID_ARGUMENT',
        });
      }
      expect(await store.list()).toEqual(['run']);
    });
  });
};

// Only as its own test file: a file that imports describeJournalContract runs it for its stores.
if (expect.getState().testPath === fileURLToPath(import.meta.url)) describeJournalContract(storeKinds);
