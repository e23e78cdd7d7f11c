import { describe, expect, it, vi } from 'vitest';
import type { AnyActorRef, InspectionEvent } from 'xstate';
import { scriptedDriver } from '../../src/drivers/scripted-driver';
import { InvalidDefinitionError, type SubagentDefinition } from '../../src/runtime/agent-definition';
import { createAgent } from '../../src/runtime/create-agent';
import { AgentState } from '../../src/state/agent-state';
import { ExecutionBudget } from '../../src/state/execution-budget';
import { ExecutionStatus } from '../../src/state/execution-status';
import type { AgentEvent } from '../../src/state/loop-events';
import { StopReason } from '../../src/state/stop-reason';
import { add, addCall } from '../support/agents';

const ask = (text = 'Research this') => AgentState.empty().withUserMessage(text);
const call = (name: string, task: string, id = `${name}-${task}`) => ({ name, args: { task }, id });

/** Records every actor the system creates, with its parent, from inspection events. */
function actorTree() {
  const actors: AnyActorRef[] = [];
  const inspect = (event: InspectionEvent) => {
    if (event.type === '@xstate.actor') actors.push(event.actorRef as AnyActorRef);
  };
  const agents = () =>
    actors.filter(
      (a) => (a.getSnapshot() as { context?: { state?: unknown } }).context?.state instanceof AgentState,
    );
  return { inspect, actors, agents };
}

describe('subagents', () => {
  it('runs a three-level tree: each child starts fresh, answers its caller, and is kept on the tool execution', async () => {
    const fetcher: SubagentDefinition = {
      description: 'Fetches a page',
      systemPrompt: 'You fetch pages.',
      driver: scriptedDriver([{ text: 'page text', usage: { inputTokens: 5, outputTokens: 5 } }]),
    };
    const researcher: SubagentDefinition = {
      description: 'Researches a topic',
      systemPrompt: 'You research.',
      driver: scriptedDriver([
        { toolCalls: [call('fetcher', 'fetch the page')] },
        { text: 'summary of page text' },
      ]),
      subagents: { agents: { fetcher } },
    };
    const root = createAgent({
      driver: scriptedDriver([{ toolCalls: [call('researcher', 'research X')] }, { text: 'X is explained' }]),
      subagents: { maxDepth: 2, agents: { researcher } },
    });
    const tree = actorTree();
    const state = await root.execute(ask(), { inspect: tree.inspect });

    expect(state.status()).toBe(ExecutionStatus.Completed);
    expect(state.finalResponse()).toBe('X is explained');
    const first = state.steps()[0]?.toolExecutions()[0];
    expect(first?.value()).toBe('summary of page text');
    expect(state.messages()[2]).toMatchObject({ role: 'tool', content: 'summary of page text' });

    const child = first?.childState();
    expect(child?.parentAgentId()).toBe(state.agentId());
    expect(child?.agentId()).not.toBe(state.agentId());
    expect(child?.systemPrompt()).toBe('You research.');
    expect(child?.messages()[0]).toMatchObject({ role: 'user', content: 'research X' });
    const grandchild = child?.steps()[0]?.toolExecutions()[0]?.childState();
    expect(grandchild?.parentAgentId()).toBe(child?.agentId());
    expect(grandchild?.finalResponse()).toBe('page text');
    expect(grandchild?.messages().map((m) => m.content)).toEqual(['fetch the page', 'page text']);

    // the whole tree survives serialization
    const restored = AgentState.fromJSON(JSON.parse(JSON.stringify(state)));
    expect(
      restored
        .steps()[0]
        ?.toolExecutions()[0]
        ?.childState()
        ?.steps()[0]
        ?.toolExecutions()[0]
        ?.childState()
        ?.finalResponse(),
    ).toBe('page text');
    // three agent actors, each child's parent the caller's actor
    const agents = tree.agents();
    expect(agents).toHaveLength(3);
    expect(agents[1]?._parent).toBe(agents[0]);
    expect(agents[2]?._parent).toBe(agents[1]);
  });

  it('adds a child usage and cost to the calling step, so the parent guards see them', async () => {
    const worker: SubagentDefinition = {
      description: 'Works',
      driver: scriptedDriver([{ text: 'done', usage: { inputTokens: 300, outputTokens: 100, cost: 0.4 } }]),
    };
    const root = createAgent({
      driver: scriptedDriver([
        { toolCalls: [call('worker', 'do it')], usage: { inputTokens: 10, outputTokens: 10 } },
      ]),
      subagents: { agents: { worker } },
      budget: new ExecutionBudget({ maxTokens: 1_000 }),
    });
    const state = await root.execute(ask());
    expect(state.steps()[0]?.usage()).toEqual({
      inputTokens: 310,
      outputTokens: 110,
      totalTokens: 420,
      cost: 0.4,
    });
    expect(state.stopReason()).toBe(StopReason.TokenLimitReached);
    expect(state.stepCount()).toBe(3); // 420, 840, 1260 >= 1000
    expect(state.usage().cost).toBeCloseTo(1.2);
  });

  it('caps a child budget by what the caller has left: maxSteps 50 under a parent with 3 steps left gets 3', async () => {
    const looper: SubagentDefinition = {
      description: 'Never finishes',
      tools: { add },
      driver: scriptedDriver([{ toolCalls: [addCall()] }]),
      budget: new ExecutionBudget({ maxSteps: 50 }),
    };
    const root = createAgent({
      driver: scriptedDriver([
        { toolCalls: [addCall()] },
        { toolCalls: [addCall()] },
        { toolCalls: [call('looper', 'loop')] },
        { text: 'gave up' },
      ]),
      tools: { add },
      subagents: { agents: { looper } },
      budget: new ExecutionBudget({ maxSteps: 5 }),
    });
    const events: AgentEvent[] = [];
    const state = await root.execute(ask(), { onEvent: (e) => events.push(e) });
    const execution = state.steps()[2]?.toolExecutions()[0];
    const child = execution?.childState();
    // the event agrees with the recorded call: the child ended without an answer
    expect(events.find((e) => e.type === 'tool.finished' && e.toolName === 'looper')).toMatchObject({
      ok: false,
      error: { name: 'SubagentFailedError' },
    });
    expect(child?.stepCount()).toBe(3);
    expect(child?.stopReason()).toBe(StopReason.StepsLimitReached);
    expect(child?.stopSignal()?.message).toBe('Step limit reached: 3/3');
    expect(execution?.error()).toMatchObject({ name: 'SubagentFailedError', code: 'SUBAGENT_FAILED' });
    expect(execution?.error()?.message).toContain("Subagent 'looper' ended stopped (steps_limit_reached)");
    expect(state.status()).toBe(ExecutionStatus.Completed);
    expect(state.finalResponse()).toBe('gave up');
  });

  it('refuses a call deeper than maxDepth: not spawned, a failed tool call the model sees', async () => {
    const inner = vi.fn(() => ({ text: 'should not run' }));
    const fetcher: SubagentDefinition = { description: 'Fetches', driver: scriptedDriver([inner]) };
    const researcher: SubagentDefinition = {
      description: 'Researches',
      driver: scriptedDriver([{ toolCalls: [call('fetcher', 'fetch')] }, { text: 'could not fetch' }]),
      subagents: { agents: { fetcher } },
    };
    const root = createAgent({
      driver: scriptedDriver([{ toolCalls: [call('researcher', 'research')] }, { text: 'done' }]),
      subagents: { maxDepth: 1, agents: { researcher } },
    });
    const state = await root.execute(ask());
    const child = state.steps()[0]?.toolExecutions()[0]?.childState();
    const refused = child?.steps()[0]?.toolExecutions()[0];
    expect(inner).not.toHaveBeenCalled();
    expect(refused?.error()).toMatchObject({
      name: 'SubagentDepthExceededError',
      code: 'SUBAGENT_DEPTH_EXCEEDED',
    });
    expect(refused?.error()?.message).toContain('depth 2, deeper than maxDepth 1');
    expect(refused?.childState()).toBeNull();
    expect(child?.messages()[2]).toMatchObject({ role: 'tool', isError: true });
    expect(child?.finalResponse()).toBe('could not fetch');
    expect(state.finalResponse()).toBe('done');
  });

  it('allows recursion (an agent listing itself), bounded by maxDepth', async () => {
    const self: SubagentDefinition = {
      description: 'Delegates to itself',
      driver: scriptedDriver([{ toolCalls: [call('self', 'deeper')] }, { text: 'bottom' }]),
    };
    Object.assign(self, { subagents: { agents: { self } } });
    const tree = actorTree();
    const root = createAgent({ driver: self.driver, subagents: { maxDepth: 3, agents: { self } } });
    const state = await root.execute(ask(), { inspect: tree.inspect });
    expect(state.status()).toBe(ExecutionStatus.Completed);
    let depth = 0;
    let node: AgentState | null | undefined = state;
    while (node?.steps()[0]?.toolExecutions()[0]?.childState()) {
      node = node.steps()[0]?.toolExecutions()[0]?.childState();
      depth++;
    }
    expect(depth).toBe(3);
    expect(node?.steps()[0]?.toolExecutions()[0]?.error()?.code).toBe('SUBAGENT_DEPTH_EXCEEDED');
    expect(tree.agents()).toHaveLength(4);
  });

  it('runs several subagent calls of one step in parallel, results in the model order, tokens split between them', async () => {
    let running = 0;
    let peak = 0;
    // a barrier, not a sleep: each child answers only once all three are running at the same time
    let allRunning: () => void = () => {};
    const together = new Promise<void>((resolve) => {
      allRunning = resolve;
    });
    const slow: SubagentDefinition = {
      description: 'Slow worker',
      driver: {
        name: 'slow',
        infer: async (state, context) => {
          running++;
          peak = Math.max(peak, running);
          if (running === 3) allRunning();
          await together;
          running--;
          const task = state.messages()[0]?.content ?? '';
          return scriptedDriver([{ text: `did ${task}` }]).infer(state, context);
        },
      },
    };
    const root = createAgent({
      driver: scriptedDriver([
        { toolCalls: [call('slow', 'a'), call('slow', 'b'), call('slow', 'c')] },
        { text: 'all done' },
      ]),
      subagents: { agents: { slow } },
      budget: new ExecutionBudget({ maxTokens: 900 }),
    });
    const state = await root.execute(ask());
    const executions = state.steps()[0]?.toolExecutions() ?? [];
    expect(executions.map((e) => e.value())).toEqual(['did a', 'did b', 'did c']);
    expect(peak).toBe(3);
    // each child got a third of the 900 tokens left
    expect(executions.map((e) => e.childState()?.stepCount())).toEqual([1, 1, 1]);
  });

  it('stops every descendant when the parent stops: none left running', async () => {
    const waiting: SubagentDefinition = {
      description: 'Waits',
      driver: scriptedDriver([{ text: 'late', delayMs: 60_000 }]),
    };
    const middle: SubagentDefinition = {
      description: 'Delegates',
      driver: scriptedDriver([{ toolCalls: [call('waiting', 'wait')] }, { text: 'never' }]),
      subagents: { agents: { waiting } },
    };
    const tree = actorTree();
    const controller = new AbortController();
    const root = createAgent({
      driver: scriptedDriver([{ toolCalls: [call('middle', 'go')] }, { text: 'never' }]),
      subagents: { agents: { middle } },
    });
    const run = root.execute(ask(), { inspect: tree.inspect, signal: controller.signal });
    await vi.waitUntil(() => tree.agents().length === 3);
    controller.abort();
    const state = await run;
    expect(state.status()).toBe(ExecutionStatus.Stopped);
    expect(state.stopReason()).toBe(StopReason.UserRequested);
    const [, child, grandchild] = tree.agents();
    for (const actor of [child, grandchild]) {
      const snapshot = actor?.getSnapshot() as { status: string; context: { state: AgentState } };
      expect(snapshot.status).toBe('stopped');
      expect(snapshot.context.state.status()).toBe(ExecutionStatus.Stopped);
      expect(snapshot.context.state.stopReason()).toBe(StopReason.UserRequested);
    }
    expect(tree.actors.filter((a) => a.getSnapshot().status === 'active')).toEqual([]);
  });

  it('refuses bad subagent definitions with a typed error naming the field', () => {
    const driver = scriptedDriver([{ text: 'x' }]);
    expect(() => createAgent({ driver, subagents: { agents: { r: {} as SubagentDefinition } } })).toThrow(
      InvalidDefinitionError,
    );
    expect(() => createAgent({ driver, subagents: { agents: { r: {} as SubagentDefinition } } })).toThrow(
      /subagents\.agents\.r\.description is missing/,
    );
    expect(() =>
      createAgent({ driver, tools: { add }, subagents: { agents: { add: { description: 'x' } } } }),
    ).toThrow(/has the name of a tool/);
    expect(() => createAgent({ driver, subagents: { maxDepth: -1, agents: {} } })).toThrow(
      /maxDepth must be a whole number/,
    );
    expect(() =>
      createAgent({
        driver,
        subagents: { agents: { r: { description: 'x', budget: { maxSteps: 1 } as never } } },
      }),
    ).toThrow(/subagents\.agents\.r\.budget must be an ExecutionBudget/);
  });
});
