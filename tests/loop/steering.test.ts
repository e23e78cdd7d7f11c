/**
 * Issue #35: the agent actor takes `{ type: 'steer', message }` in every state of a run (a model
 * call, a tool, an approval in flight) and applies it at the next step boundary: the message joins
 * the conversation, `message.steered` is emitted, and the model sees it at the next step, one more
 * step if the model had just given its final answer.
 */

import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import type { Driver } from '../../src/drivers/driver';
import { type ScriptEntry, scriptedDriver } from '../../src/drivers/scripted-driver';
import { SqliteSessionStore } from '../../src/persistence/sqlite-session-store';
import { createAgent } from '../../src/runtime/create-agent';
import { AgentState } from '../../src/state/agent-state';
import { ExecutionBudget } from '../../src/state/execution-budget';
import { ExecutionStatus } from '../../src/state/execution-status';
import type { AgentEvent } from '../../src/state/loop-events';
import { Message } from '../../src/state/message';
import { defineTool } from '../../src/tools/define-tool';
import { add, addCall, recordEvents } from '../support/agents';

/** A scripted driver that keeps every prompt (role: text) and holds its first call until `open()`. */
function promptedDriver(script: readonly ScriptEntry[]) {
  const inner = scriptedDriver(script);
  const prompts: string[][] = [];
  let open!: () => void;
  const gate = new Promise<void>((resolve) => {
    open = resolve;
  });
  let called!: () => void;
  const waiting = new Promise<void>((resolve) => {
    called = resolve;
  });
  const driver: Driver = {
    name: 'prompted',
    infer: async (state, context) => {
      prompts.push(state.messages().map((m) => `${m.role}: ${m.content}`));
      if (prompts.length === 1) {
        called();
        await gate;
      }
      return inner.infer(state, context);
    },
  };
  return { driver, prompts, open, waiting };
}

const finished = (actor: { on: (type: 'execution.finished', fn: () => void) => unknown }) =>
  new Promise<void>((resolve) => actor.on('execution.finished', () => resolve()));

type Steered = Extract<AgentEvent, { type: 'message.steered' }>;
type Refused = Extract<AgentEvent, { type: 'event.refused' }>;

describe('steer: a message joins the running execution at its next step', () => {
  it('sent while the model gives its final answer: one more step, whose prompt ends with it', async () => {
    const { driver, prompts, open, waiting } = promptedDriver([{ text: 'five' }, { text: 'six' }]);
    const actor = createAgent({ driver }).createActor(AgentState.empty().withUserMessage('2 + 3?'));
    const events = recordEvents(actor);
    actor.start();
    actor.send({ type: 'execute' });
    await waiting;
    actor.send({ type: 'steer', message: 'and 3 + 3?' });
    const done = finished(actor);
    open();
    await done;

    const state = actor.getSnapshot().context.state;
    expect(state.status()).toBe(ExecutionStatus.Completed);
    expect(state.executionCount()).toBe(1);
    expect(state.stepCount()).toBe(2);
    expect(prompts[1]).toEqual(['user: 2 + 3?', 'assistant: five', 'user: and 3 + 3?']);
    expect(state.messages().map((m) => m.content)).toEqual(['2 + 3?', 'five', 'and 3 + 3?', 'six']);
    expect(state.steeredMessages()).toEqual([]);
    const steered = events.filter((e): e is Steered => e.type === 'message.steered');
    expect(steered.map((e) => [e.stepNumber, e.message.content])).toEqual([[2, 'and 3 + 3?']]);
    // announced as it joins, before the step that sees it starts
    const types = events.map((e) => e.type);
    expect(types.indexOf('message.steered')).toBeLessThan(types.lastIndexOf('step.started'));
    actor.stop();
  });

  it('sent while a tool runs (a Message): the next step sees it after the tool result', async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    let started!: () => void;
    const running = new Promise<void>((resolve) => {
      started = resolve;
    });
    const slow = defineTool({
      description: 'Adds slowly',
      inputSchema: z.object({ a: z.number(), b: z.number() }),
      execute: async ({ a, b }) => {
        started();
        await released;
        return a + b;
      },
    });
    const driver = scriptedDriver([{ toolCalls: [{ ...addCall(), name: 'slow' }] }, { text: '5, and 6' }]);
    const prompts: string[][] = [];
    const recording: Driver = {
      name: 'recording',
      infer: (state, context) => {
        prompts.push(state.messages().map((m) => `${m.role}: ${m.content}`));
        return driver.infer(state, context);
      },
    };
    const actor = createAgent({ driver: recording, tools: { slow } }).createActor(
      AgentState.empty().withUserMessage('2 + 3?'),
    );
    const events = recordEvents(actor);
    actor.start();
    actor.send({ type: 'execute' });
    await running;
    actor.send({ type: 'steer', message: Message.user('also 3 + 3') });
    const done = finished(actor);
    release();
    await done;

    const state = actor.getSnapshot().context.state;
    expect(state.status()).toBe(ExecutionStatus.Completed);
    expect(state.stepCount()).toBe(2);
    expect(prompts[1]?.at(-1)).toBe('user: also 3 + 3');
    expect(prompts[1]?.at(-2)).toMatch(/^tool: /);
    expect(events.filter((e) => e.type === 'message.steered')).toHaveLength(1);
    actor.stop();
  });

  it('sent while a call awaits approval: the step after the approved call sees it', async () => {
    const guarded = defineTool({
      description: 'Adds, with approval',
      inputSchema: z.object({ a: z.number(), b: z.number() }),
      needsApproval: true,
      execute: async ({ a, b }) => a + b,
    });
    const prompts: string[][] = [];
    const inner = scriptedDriver([{ toolCalls: [{ ...addCall(), name: 'guarded' }] }, { text: 'done' }]);
    const driver: Driver = {
      name: 'recording',
      infer: (state, context) => {
        prompts.push(state.messages().map((m) => `${m.role}: ${m.content}`));
        return inner.infer(state, context);
      },
    };
    const actor = createAgent({ driver, tools: { guarded } }).createActor(
      AgentState.empty().withUserMessage('2 + 3?'),
    );
    const asked = new Promise<string>((resolve) =>
      actor.on('approval.requested', (e) => resolve(e.toolCalls[0]?.toolCallId ?? '')),
    );
    actor.start();
    actor.send({ type: 'execute' });
    const toolCallId = await asked;
    actor.send({ type: 'steer', message: 'then stop' });
    const done = finished(actor);
    actor.send({ type: 'approve', toolCallId });
    await done;

    const state = actor.getSnapshot().context.state;
    expect(state.status()).toBe(ExecutionStatus.Completed);
    expect(prompts[1]?.at(-1)).toBe('user: then stop');
    actor.stop();
  });

  it('is refused out loud outside a run (NO_RUN_IN_PROGRESS) and without a message (INVALID_ARGUMENT)', async () => {
    const { driver, open, waiting } = promptedDriver([{ text: 'five' }]);
    const actor = createAgent({ driver }).createActor(AgentState.empty().withUserMessage('2 + 3?'));
    const refused: Refused[] = [];
    actor.on('event.refused', (e) => refused.push(e));
    actor.start();
    actor.send({ type: 'steer', message: 'too early' });
    actor.send({ type: 'execute' });
    await waiting;
    actor.send({ type: 'steer', message: { role: 'user' } as unknown as Message });
    const done = finished(actor);
    open();
    await done;

    expect(refused.map((e) => [e.event, e.error.code])).toEqual([
      ['steer', 'NO_RUN_IN_PROGRESS'],
      ['steer', 'INVALID_ARGUMENT'],
    ]);
    const state = actor.getSnapshot().context.state;
    expect(state.stepCount()).toBe(1);
    expect(state.messages().map((m) => m.content)).toEqual(['2 + 3?', 'five']);
    actor.stop();
  });

  it('a message steered while the run ends waits, saved, for the next execution', async () => {
    const { driver, prompts, open, waiting } = promptedDriver([{ text: 'five' }, { text: 'six' }]);
    const agent = createAgent({ driver, budget: new ExecutionBudget({ maxSteps: 1 }) });
    const actor = agent.createActor(AgentState.empty().withUserMessage('2 + 3?'));
    actor.start();
    actor.send({ type: 'execute' });
    await waiting;
    actor.send({ type: 'steer', message: 'and 3 + 3?' });
    const done = finished(actor);
    open();
    await done;

    const state = actor.getSnapshot().context.state;
    expect(state.stepCount()).toBe(1);
    expect(state.steeredMessages().map((m) => m.content)).toEqual(['and 3 + 3?']);
    const next = await agent.execute(AgentState.fromJSON(JSON.parse(JSON.stringify(state.toJSON()))));
    expect(prompts[1]).toEqual(['user: 2 + 3?', 'assistant: five', 'user: and 3 + 3?']);
    expect(next.finalResponse()).toBe('six');
    actor.stop();
  });
});

describe('steering is checkpointed', () => {
  it('a process killed after a steered message: the resumed run keeps it and the model sees it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agent-machine-steer-'));
    try {
      const path = join(dir, 'agents.db');
      const child = spawn(
        process.execPath,
        ['--import', 'tsx', 'tests/support/steer-crash-run.ts', path, 'chat-1'],
        {
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      let output = '';
      child.stdout.on('data', (d) => (output += d));
      child.stderr.on('data', (d) => (output += d));
      const exited = new Promise<NodeJS.Signals | null>((resolve) =>
        child.on('exit', (_code, signal) => resolve(signal)),
      );
      // the first step is saved (the steered message with it); the child is in the slow model call
      const watcher = new SqliteSessionStore(path);
      await vi.waitUntil(
        async () => {
          if (child.exitCode !== null) throw new Error(`the child exited early: ${output}`);
          return ((await watcher.load('chat-1'))?.state.stepCount() ?? 0) === 1;
        },
        { timeout: 30_000, interval: 25 },
      );
      await watcher.close();
      child.kill('SIGKILL');
      expect(await exited).toBe('SIGKILL');

      const store = new SqliteSessionStore(path);
      const saved = (await store.load('chat-1'))?.state;
      expect(saved?.steeredMessages().map((m) => m.content)).toEqual(['and 3 + 3?']);
      const prompts: string[][] = [];
      const script = scriptedDriver([{ toolCalls: [addCall()] }, { text: '6' }]);
      const agent = createAgent({
        driver: {
          name: 'recording',
          infer: (state, context) => {
            prompts.push(state.messages().map((m) => `${m.role}: ${m.content}`));
            return script.infer(state, context);
          },
        },
        tools: { add },
        store,
      });
      const steered: Steered[] = [];
      const state = await agent.resume('chat-1', {
        onEvent: (e) => {
          if (e.type === 'message.steered') steered.push(e);
        },
      });
      await store.close();

      expect(state.status()).toBe(ExecutionStatus.Completed);
      expect(prompts[0]?.at(-1)).toBe('user: and 3 + 3?');
      expect(steered.map((e) => [e.stepNumber, e.message.content])).toEqual([[2, 'and 3 + 3?']]);
      expect(state.messages().filter((m) => m.content === 'and 3 + 3?')).toHaveLength(1);
      expect(state.steeredMessages()).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
