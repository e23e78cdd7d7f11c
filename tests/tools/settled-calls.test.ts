import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { scriptedDriver } from '../../src/drivers/scripted-driver';
import type { Hook } from '../../src/hooks/hook';
import { FileSessionStore } from '../../src/persistence/file-session-store';
import { createAgent } from '../../src/runtime/create-agent';
import { AgentState } from '../../src/state/agent-state';
import { ExecutionStatus } from '../../src/state/execution-status';
import { StopReason } from '../../src/state/stop-reason';
import { defineTool } from '../../src/tools/define-tool';
import { tempDir } from '../persistence/fixtures';

const question = () => AgentState.empty().withUserMessage('Go');

/** Settles only when `signal` aborts, rejecting with its reason (a tool that honours its signal). */
const untilAborted = (signal: AbortSignal) =>
  new Promise<never>((_, reject) => {
    if (signal.aborted) reject(signal.reason);
    signal.addEventListener('abort', () => reject(signal.reason), { once: true });
  });

const fast = defineTool({
  description: 'Answers at once',
  inputSchema: z.object({}),
  execute: async () => 'fast answer',
});
const slow = defineTool({
  description: 'Runs until stopped',
  inputSchema: z.object({}),
  execute: async (_input, { signal }) => untilAborted(signal),
});

describe('a parallel tool step', () => {
  it('stopped in the middle keeps the results of the calls that had finished', async () => {
    const { dir, remove } = await tempDir();
    const store = new FileSessionStore(dir);
    try {
      const agent = createAgent({
        driver: scriptedDriver([
          {
            toolCalls: [
              { id: 'f1', name: 'fast', args: {} },
              { id: 's1', name: 'slow', args: {} },
              { id: 'f2', name: 'fast', args: {} },
            ],
          },
          { text: 'never' },
        ]),
        tools: { fast, slow },
        store,
      });
      const controller = new AbortController();
      let finished = 0;
      const done = await agent.execute(question(), {
        sessionId: 'stop',
        signal: controller.signal,
        onEvent: (event) => {
          if (event.type === 'tool.finished' && event.ok && ++finished === 2) controller.abort();
        },
      });
      expect(done.status()).toBe(ExecutionStatus.Stopped);
      expect(done.stopReason()).toBe(StopReason.UserRequested);
      const executions = done.steps()[0]?.toolExecutions() ?? [];
      const byId = Object.fromEntries(executions.map((e) => [e.toolCallId(), e]));
      expect(byId.f1?.value()).toBe('fast answer');
      expect(byId.f2?.value()).toBe('fast answer');
      expect(byId.f1?.hasError()).toBe(false);
      expect(byId.s1?.error()?.code).toBe('ABORTED');
      expect(executions).toHaveLength(3);
      expect((await store.load('stop'))?.state.toJSON()).toEqual(done.toJSON());
    } finally {
      await store.close();
      await remove();
    }
  });

  it('arguments a beforeToolUse hook writes are kept as JSON, or fail that call when they cannot be', async () => {
    let deep: unknown = 1;
    for (let i = 0; i < 1000; i++) deep = [deep];
    const rewriter: Hook = {
      name: 'rewriter',
      beforeToolUse: (_state, { toolCall }) => ({
        args: toolCall.id === 'a' ? { n: Number.NaN, when: new Date(0) } : { deep },
      }),
    };
    const echo = defineTool({
      description: 'Echo',
      inputSchema: z.object({}).passthrough(),
      execute: async (input) => input,
    });
    const agent = createAgent({
      driver: scriptedDriver([
        {
          toolCalls: [
            { id: 'a', name: 'echo', args: {} },
            { id: 'b', name: 'echo', args: {} },
          ],
        },
        { text: 'done' },
      ]),
      tools: { echo },
      hooks: [rewriter],
    });
    const done = await agent.execute(question());
    const [a, b] = done.steps()[0]?.toolExecutions() ?? [];
    expect(a?.args()).toEqual({ n: null, when: '1970-01-01T00:00:00.000Z' });
    expect(b?.error()?.code).toBe('VALUE_TOO_DEEP');
    expect(AgentState.fromJSON(JSON.parse(JSON.stringify(done))).toJSON()).toEqual(done.toJSON());
  });

  it('an afterToolUse hook that throws fails the run (DESIGN: a hook that throws); the calls keep their results', async () => {
    const picky: Hook = {
      name: 'picky',
      afterToolUse: (_state, { toolExecution }) => {
        if (toolExecution.toolCallId() === 'b') throw new Error('audit log unavailable');
        return undefined;
      },
    };
    const agent = createAgent({
      driver: scriptedDriver([
        {
          toolCalls: [
            { id: 'a', name: 'fast', args: {} },
            { id: 'b', name: 'fast', args: {} },
            { id: 'c', name: 'fast', args: {} },
          ],
        },
        { text: 'done' },
      ]),
      tools: { fast },
      hooks: [picky],
    });
    const done = await agent.execute(question());
    expect(done.status()).toBe(ExecutionStatus.Failed);
    expect(done.stopReason()).toBe(StopReason.ErrorForbade);
    const executions = done.steps()[0]?.toolExecutions() ?? [];
    expect(executions.map((e) => e.value())).toEqual(['fast answer', 'fast answer', 'fast answer']);
    expect(done.errors().map((e) => e.message)).toEqual(['audit log unavailable']);
  });
});
