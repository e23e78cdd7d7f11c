import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { scriptedDriver } from '../../src/drivers/scripted-driver';
import {
  CorruptExecutionRecordError,
  DuplicateExecutionError,
  ExecutionNotFinishedError,
  ExecutionNotFoundError,
  ExecutionRecord,
  type ExecutionStore,
  InMemoryExecutionStore,
  SqliteExecutionStore,
  StoreClosedError,
  stateFromRecord,
} from '../../src/persistence/index';
import type { Agent } from '../../src/runtime/agent-actor';
import { createAgent } from '../../src/runtime/create-agent';
import { AgentState } from '../../src/state/agent-state';
import { ExecutionBudget } from '../../src/state/execution-budget';
import { StopReason } from '../../src/state/stop-reason';
import { add, addCall } from '../support/agents';
import { finishedState, inProgressState, tempDir } from './fixtures';

interface ExecutionFixture {
  readonly store: ExecutionStore;
  /** Another store over the same storage, or null where there is none to share (memory). */
  reopen(): ExecutionStore | null;
  cleanup(): Promise<void>;
}

const kinds: { name: string; create(): Promise<ExecutionFixture> }[] = [
  {
    name: 'InMemoryExecutionStore',
    async create() {
      const store = new InMemoryExecutionStore();
      return { store, reopen: () => null, cleanup: () => store.close() };
    },
  },
  {
    name: 'SqliteExecutionStore',
    async create() {
      const { dir, remove } = await tempDir();
      const opened: ExecutionStore[] = [];
      const open = () => {
        const store = new SqliteExecutionStore(join(dir, 'agents.db'));
        opened.push(store);
        return store;
      };
      return {
        store: open(),
        reopen: open,
        cleanup: async () => {
          await Promise.all(opened.map((s) => s.close()));
          await remove();
        },
      };
    },
  },
];

/** An agent that answers each question with a tool step and a final answer. */
function adder(): Agent {
  return createAgent({
    driver: scriptedDriver([{ toolCalls: [addCall()] }, { text: 'done' }]),
    tools: { add },
  });
}

/** Runs `turns` executions of one session, returning the final state of each. */
async function conversation(turns: number): Promise<AgentState[]> {
  // One script entry per step of every turn: a tool call then an answer.
  const script = Array.from({ length: turns }, (_, i) => [
    { toolCalls: [addCall(i, i)] },
    { text: `answer ${i}` },
  ]).flat();
  const agent = createAgent({ driver: scriptedDriver(script), tools: { add } });
  const states: AgentState[] = [];
  let state = AgentState.empty().withSystemPrompt('You add numbers.');
  for (let i = 0; i < turns; i++) {
    state = await agent.execute(state.withUserMessage(`question ${i}`));
    states.push(state);
    state = state.forNextExecution();
  }
  return states;
}

describe.each(kinds)('$name (ExecutionStore contract)', (kind) => {
  let fixture: ExecutionFixture;
  let store: ExecutionStore;
  beforeEach(async () => {
    fixture = await kind.create();
    store = fixture.store;
  });
  afterEach(async () => {
    await fixture.cleanup();
  });

  it('records a finished execution with its summary and final state', async () => {
    const state = await finishedState();
    const record = await store.record(state);
    expect(record).toBeInstanceOf(ExecutionRecord);
    expect(record.executionId).toBe(state.executionId());
    expect(record.agentId).toBe(state.agentId());
    expect(record.parentAgentId).toBeNull();
    expect(record.status).toBe('completed');
    expect(record.stopReason).toBe(StopReason.Completed);
    expect(record.stepCount).toBe(2);
    expect(record.usage).toEqual(state.usage());
    expect(record.startedAt).toEqual(state.execution()?.startedAt());
    expect(record.completedAt).toEqual(state.execution()?.completedAt());
    expect(record.finalState.toJSON()).toEqual(state.toJSON());

    const again = await store.getById(record.executionId);
    expect(again?.toJSON()).toEqual(record.toJSON());
    expect(again?.finalState.finalResponse()).toBe('5');
  });

  it("uses seed 001's names: getByAgent, and records with finalStatus, totalUsage and steps", async () => {
    const turns = await conversation(2);
    for (const turn of turns) await store.record(turn);
    const [first, second] = await store.getByAgent(turns[0]?.agentId() as string);
    expect([first?.executionId, second?.executionId]).toEqual(turns.map((s) => s.executionId()));
    expect(first?.finalStatus).toBe('completed');
    expect(first?.totalUsage).toEqual(turns[0]?.usage());
    expect(first?.steps.map((s) => s.step().stepType())).toEqual(['tool_execution', 'final_response']);
    expect(first?.steps.map((s) => s.id())).toEqual(turns[0]?.stepExecutions().map((s) => s.id()));
    // today's names stay, as deprecated aliases
    const listed = await store.listByAgent(turns[0]?.agentId() as string);
    expect(listed.map((r) => r.toJSON())).toEqual([first?.toJSON(), second?.toJSON()]);
    expect([first?.status, first?.usage, first?.stepCount]).toEqual([
      first?.finalStatus,
      first?.totalUsage,
      first?.steps.length,
    ]);
  });

  it('returns null for an execution id it has not recorded', async () => {
    expect(await store.getById('no-such-execution')).toBeNull();
    expect(await store.listByAgent('no-such-agent')).toEqual([]);
  });

  it('records stopped and failed executions with their stop reasons', async () => {
    const stopped = await createAgent({
      driver: scriptedDriver([{ toolCalls: [addCall()] }]),
      tools: { add },
      budget: new ExecutionBudget({ maxSteps: 2 }),
    }).execute(AgentState.empty().withUserMessage('loop'));
    const failed = await createAgent({
      driver: scriptedDriver([{ error: new Error('model down') }]),
    }).execute(AgentState.empty().withUserMessage('fail'));
    const s = await store.record(stopped);
    const f = await store.record(failed);
    expect([s.status, s.stopReason, s.stepCount]).toEqual(['stopped', StopReason.StepsLimitReached, 2]);
    expect([f.status, f.stopReason]).toEqual(['failed', StopReason.ErrorForbade]);
    expect((await store.getById(f.executionId))?.finalState.errors()[0]?.message).toContain('model down');
  });

  it('refuses a state whose execution is not finished, and records nothing', async () => {
    const running = inProgressState(2);
    const cases: [AgentState, RegExp][] = [
      [running, /its status is in_progress/],
      [AgentState.empty().withUserMessage('no execution yet'), /the state has none \(status pending\)/],
      [(await finishedState()).forNextExecution(), /the state has none/],
    ];
    for (const [state, message] of cases) {
      const error = await store.record(state).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ExecutionNotFinishedError);
      expect(error).toMatchObject({ code: 'EXECUTION_NOT_FINISHED' });
      expect((error as Error).message).toMatch(message);
    }
    expect(await store.listByAgent(running.agentId())).toEqual([]);
    expect(await store.getById(running.executionId() as string)).toBeNull();
  });

  it('is append-only: recording the same execution twice raises DuplicateExecutionError', async () => {
    const state = await finishedState();
    const first = await store.record(state);
    const error = await store.record(state).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DuplicateExecutionError);
    expect(error).toMatchObject({ code: 'EXECUTION_EXISTS', executionId: state.executionId() });
    expect((await store.listByAgent(state.agentId())).map((r) => r.toJSON())).toEqual([first.toJSON()]);
  });

  it("lists an agent's executions of a conversation in order, and only that agent's", async () => {
    const turns = await conversation(3);
    const other = await finishedState();
    await store.record(turns[0] as AgentState);
    await store.record(other);
    await store.record(turns[1] as AgentState);
    await store.record(turns[2] as AgentState);
    const listed = await store.listByAgent(turns[0]?.agentId() as string);
    expect(listed.map((r) => r.executionId)).toEqual(turns.map((s) => s.executionId()));
    expect(listed.map((r) => r.finalState.finalResponse())).toEqual(['answer 0', 'answer 1', 'answer 2']);
    expect((await store.listByAgent(other.agentId())).map((r) => r.executionId)).toEqual([
      other.executionId(),
    ]);
  });

  it('lists by completion time, not by the order recorded', async () => {
    // Explicit times, so that the order does not depend on the clock.
    const first = AgentState.empty()
      .withUserMessage('q1')
      .withExecutionStarted(1_000)
      .withExecutionCompleted(2_000);
    const second = first
      .forNextExecution()
      .withUserMessage('q2')
      .withExecutionStarted(3_000)
      .withExecutionCompleted(4_000);
    const third = second
      .forNextExecution()
      .withUserMessage('q3')
      .withExecutionStarted(5_000)
      .withExecutionCompleted(6_000);
    for (const state of [third, first, second]) await store.record(state);
    expect((await store.listByAgent(first.agentId())).map((r) => r.executionId)).toEqual(
      [first, second, third].map((s) => s.executionId()),
    );
  });

  it('keeps executions that completed at the same moment in the order recorded', async () => {
    const base = AgentState.empty().withUserMessage('q');
    const first = base.withExecutionStarted(1_000).withExecutionCompleted(5_000);
    const second = first
      .forNextExecution()
      .withUserMessage('q2')
      .withExecutionStarted(2_000)
      .withExecutionCompleted(5_000);
    const earliest = second.forNextExecution().withExecutionStarted(500).withExecutionCompleted(4_000);
    await store.record(second);
    await store.record(first);
    await store.record(earliest);
    const listed = await store.listByAgent(base.agentId());
    expect(listed.map((r) => r.executionId)).toEqual([
      earliest.executionId(),
      second.executionId(),
      first.executionId(),
    ]);
  });

  it('rewinds to the state after an execution, ready for the next one', async () => {
    const turns = await conversation(3);
    for (const state of turns) await store.record(state);
    const first = turns[0] as AgentState;
    const rewound = await store.rewind(first.executionId() as string);
    expect(rewound.status()).toBe('pending');
    expect(rewound.execution()).toBeNull();
    expect(rewound.agentId()).toBe(first.agentId());
    expect(rewound.executionCount()).toBe(1);
    // The conversation as the first execution left it: nothing of the later turns.
    expect(rewound.messages().map((m) => m.content)).toEqual(first.messages().map((m) => m.content));
    expect(rewound.messages().some((m) => m.content === 'question 1')).toBe(false);
    const record = (await store.getById(first.executionId() as string)) as ExecutionRecord;
    expect(stateFromRecord(record).toJSON()).toMatchObject({
      ...rewound.toJSON(),
      updatedAt: expect.any(String),
    });

    // The rewound state runs again as a new execution of the same agent.
    const replay = await adder().execute(rewound.withUserMessage('another way'));
    expect(replay.executionCount()).toBe(2);
    expect(replay.executionId()).not.toBe(first.executionId());
    expect(replay.finalResponse()).toBe('done');
    await store.record(replay);
    expect(await store.listByAgent(first.agentId())).toHaveLength(4);
  });

  it('rewind of an unknown execution raises ExecutionNotFoundError', async () => {
    const error = await store.rewind('missing').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ExecutionNotFoundError);
    expect(error).toMatchObject({ code: 'EXECUTION_NOT_FOUND', executionId: 'missing' });
  });

  it('is durable where storage is shared', async () => {
    const state = await finishedState();
    await store.record(state);
    const again = fixture.reopen();
    if (again === null) {
      expect(kind.name).toBe('InMemoryExecutionStore');
      return;
    }
    expect((await again.getById(state.executionId() as string))?.toJSON()).toEqual(
      ExecutionRecord.fromState(state).toJSON(),
    );
    await expect(again.record(state)).rejects.toBeInstanceOf(DuplicateExecutionError);
  });

  it('refuses every operation after close', async () => {
    const state = await finishedState();
    await store.close();
    await store.close();
    for (const call of [
      () => store.record(state),
      () => store.getById('x'),
      () => store.listByAgent('x'),
      () => store.rewind('x'),
    ]) {
      await expect(call()).rejects.toBeInstanceOf(StoreClosedError);
    }
  });
});

describe('SqliteExecutionStore storage', () => {
  let file: string;
  let remove: () => Promise<void>;
  let store: SqliteExecutionStore;
  beforeEach(async () => {
    const temp = await tempDir();
    remove = temp.remove;
    file = join(temp.dir, 'agents.db');
    store = new SqliteExecutionStore(file);
  });
  afterEach(async () => {
    await store.close();
    await remove();
  });

  it('keeps summary columns for queries next to the record', async () => {
    const turns = await conversation(2);
    for (const state of turns) await store.record(state);
    const db = new Database(file, { readonly: true });
    const rows = db
      .prepare(
        'SELECT execution_id, agent_id, status, stop_reason, step_count, total_tokens FROM executions ORDER BY seq',
      )
      .all();
    db.close();
    expect(rows).toEqual(
      turns.map((s) => ({
        execution_id: s.executionId(),
        agent_id: s.agentId(),
        status: 'completed',
        stop_reason: 'completed',
        step_count: 2,
        total_tokens: s.usage().totalTokens,
      })),
    );
  });

  it.each([
    ['garbage', () => 'not json {{{', /not valid JSON/, null],
    [
      'a record whose summary was altered',
      (json: string) => JSON.stringify({ ...JSON.parse(json), stepCount: 99 }),
      /stepCount: is 99, but the final state says 2; the record was altered/,
      'stepCount',
    ],
    [
      'a final state with a bad field',
      (json: string) => {
        const record = JSON.parse(json);
        record.finalState.execution.status = 'exploded';
        return JSON.stringify(record);
      },
      /Invalid ExecutionRecord at finalState\.execution\.status/,
      'finalState.execution.status',
    ],
  ])(
    '%s: raises CorruptExecutionRecordError naming the execution; others stay readable',
    async (_, damage, problem, path) => {
      const [bad, good] = await conversation(2);
      await store.record(bad as AgentState);
      await store.record(good as AgentState);
      const badId = bad?.executionId() as string;
      const db = new Database(file);
      const json = db
        .prepare('SELECT record_json FROM executions WHERE execution_id = ?')
        .pluck()
        .get(badId) as string;
      const damaged = damage(json);
      db.prepare('UPDATE executions SET record_json = ? WHERE execution_id = ?').run(damaged, badId);
      db.close();

      const error = await store.getById(badId).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(CorruptExecutionRecordError);
      expect(error).toMatchObject({ code: 'EXECUTION_RECORD_CORRUPT', executionId: badId, path });
      expect((error as Error).message).toMatch(problem);
      expect((error as Error).message).toContain(`Execution record "${badId}" is corrupt`);
      await expect(store.listByAgent(bad?.agentId() as string)).rejects.toBeInstanceOf(
        CorruptExecutionRecordError,
      );
      await expect(store.rewind(badId)).rejects.toBeInstanceOf(CorruptExecutionRecordError);
      expect((await store.getById(good?.executionId() as string))?.stepCount).toBe(2);
      const check = new Database(file, { readonly: true });
      expect(
        check.prepare('SELECT record_json FROM executions WHERE execution_id = ?').pluck().get(badId),
      ).toBe(damaged);
      check.close();
    },
  );
});
