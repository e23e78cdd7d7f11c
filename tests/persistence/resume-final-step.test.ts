import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LanguageModelV4GenerateResult } from '@ai-sdk/provider';
import { MockLanguageModelV4 } from 'ai/test';
import { afterEach, describe, expect, it } from 'vitest';
import type { SessionStore } from '../../src/persistence/session-store';
import { SqliteSessionStore } from '../../src/persistence/sqlite-session-store';
import { createAgent } from '../../src/runtime/create-agent';
import { AgentState } from '../../src/state/agent-state';
import { AgentStepType } from '../../src/state/agent-step-type';
import { ExecutionStatus } from '../../src/state/execution-status';
import type { AgentEvent } from '../../src/state/loop-events';
import { add } from '../support/agents';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
const sqlitePath = () => {
  const dir = mkdtempSync(join(tmpdir(), 'agent-machine-resume-'));
  dirs.push(dir);
  return join(dir, 'agents.db');
};

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: undefined },
  outputTokens: { total: 2, text: 2, reasoning: undefined },
};
/** A model that calls `add` once, then answers `5` with `finish` as its finish reason; it counts its calls. */
function adder(finish: 'stop' | 'length' = 'stop') {
  let calls = 0;
  const model = new MockLanguageModelV4({
    doGenerate: async (): Promise<LanguageModelV4GenerateResult> => {
      calls++;
      if (calls === 1)
        return {
          content: [{ type: 'tool-call', toolCallId: 'c1', toolName: 'add', input: '{"a":2,"b":3}' }],
          finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
          usage,
          warnings: [],
        };
      return {
        content: [{ type: 'text', text: '5' }],
        finishReason: { unified: finish, raw: finish },
        usage,
        warnings: [],
      };
    },
  });
  return {
    model,
    get calls() {
      return calls;
    },
  };
}

/** A store that keeps a copy of every state it is asked to save. */
function recording(store: SessionStore): { store: SessionStore; saved: AgentState[] } {
  const saved: AgentState[] = [];
  return {
    saved,
    store: {
      load: (id) => store.load(id),
      save: (id, state, version) => {
        saved.push(state);
        return store.save(id, state, version);
      },
      delete: (id) => store.delete(id),
      list: () => store.list(),
      close: () => store.close(),
    },
  };
}

const question = () => AgentState.empty().withUserMessage('What is 2 + 3?');

/**
 * The checkpoint a run leaves when it stops between recording its last step and finalizing (a
 * crash, or a worker closed): the uninterrupted run's save made right after that step, written to
 * a real SQLite store. With the uninterrupted run's final state, to compare.
 */
async function checkpointWithFinalStep(path: string, finish: 'stop' | 'length') {
  const { store, saved } = recording(new SqliteSessionStore(sqlitePath()));
  const agent = createAgent({ model: adder(finish).model, tools: { add }, store });
  const uninterrupted = await agent.execute(question(), { sessionId: 'run' });
  await store.close();
  const lastRecorded = saved.findLast((s) => s.status() === ExecutionStatus.InProgress) as AgentState;
  const crashed = new SqliteSessionStore(path);
  await crashed.save('chat-1', lastRecorded, null);
  await crashed.close();
  return { uninterrupted, lastRecorded };
}

describe('resume of a checkpoint that already holds the final step', () => {
  it.each([
    ['an answer', 'stop'],
    ['an answer cut by its length', 'length'],
  ] as const)(
    'ends the run as it would have ended, without calling the model again (%s)',
    async (_, finish) => {
      const path = sqlitePath();
      const { uninterrupted, lastRecorded } = await checkpointWithFinalStep(path, finish);
      expect(lastRecorded.stepCount()).toBe(2);
      expect(lastRecorded.lastStepType()).toBe(AgentStepType.FinalResponse);

      const model = adder(finish);
      const store = new SqliteSessionStore(path);
      const agent = createAgent({ model: model.model, tools: { add }, store });
      const events: AgentEvent[] = [];
      const state = await agent.resume('chat-1', { onEvent: (e) => events.push(e) });

      expect(model.calls).toBe(0);
      expect(state.status()).toBe(uninterrupted.status());
      expect(state.stopReason()).toBe(uninterrupted.stopReason());
      expect(state.finalResponse()).toBe('5');
      expect(state.stepCount()).toBe(2);
      expect(state.messages().filter((m) => m.role === 'assistant' && m.content === '5')).toHaveLength(1);
      expect(state.executionId()).toBe(lastRecorded.executionId());
      expect(events.filter((e) => e.type === 'step.started')).toEqual([]);
      expect(events.find((e) => e.type === 'execution.finished')).toMatchObject({
        status: uninterrupted.status(),
        stopReason: uninterrupted.stopReason(),
      });
      const stored = await store.load('chat-1');
      expect(stored?.state.status()).toBe(uninterrupted.status());
      expect(stored?.state.toJSON()).toEqual(state.toJSON());
      await store.close();
    },
  );
});
