import { describe, expect, it } from 'vitest';
import { reactDriver } from '../../src/drivers/react-driver';
import { createAgent } from '../../src/runtime/create-agent';
import { AgentState } from '../../src/state/agent-state';
import { AgentStepType } from '../../src/state/agent-step-type';
import { ExecutionStatus } from '../../src/state/execution-status';
import { StopReason } from '../../src/state/stop-reason';
import { add } from '../support/agents';
import { localModel, type OpenAIServer, serverPerTest, textReply } from '../support/openai-server';

const start = serverPerTest();
const agentOn = (s: OpenAIServer) =>
  createAgent({
    driver: reactDriver(localModel(s), { retryDelayMs: 1 }),
    tools: { add },
    systemPrompt: 'You add numbers.',
  });
const question = () => AgentState.empty().withUserMessage('What is 2 + 3?');
const action = 'Thought: I should add the numbers.\nAction: add\nAction Input: {"a": 2, "b": 3}';
const final = 'Thought: I know the answer.\nFinal Answer: 5';

describe('the ReAct driver on an OpenAI-compatible HTTP server (text only, no native tools)', () => {
  it('describes the tools in the system prompt, runs the Action and sends the Observation back', async () => {
    const s = await start([textReply(action), textReply(final)]);
    const state = await agentOn(s).execute(question());

    expect(state.status()).toBe(ExecutionStatus.Completed);
    expect(state.stopReason()).toBe(StopReason.Completed);
    expect(state.finalResponse()).toBe('5');
    expect(state.steps().map((step) => step.stepType())).toEqual([
      AgentStepType.ToolExecution,
      AgentStepType.FinalResponse,
    ]);
    expect(state.steps()[0]?.requestedToolCalls()).toEqual([
      { id: expect.stringMatching(/^react_/), name: 'add', args: { a: 2, b: 3 } },
    ]);
    expect(state.steps()[0]?.toolExecutions()[0]?.value()).toBe(5);
    expect(state.usage()).toEqual({ inputTokens: 40, outputTokens: 4, totalTokens: 44, cost: 0 });
    // The conversation keeps the answer alone, not the protocol around it.
    expect(state.messages().at(-1)).toMatchObject({ role: 'assistant', content: '5' });

    expect(s.requests).toHaveLength(2);
    const [first, second] = s.requests;
    expect(first?.body).not.toHaveProperty('tools');
    expect(first?.body.stop).toEqual(['\nObservation:']);
    const system = first?.body.messages[0];
    expect(system.role).toBe('system');
    expect(system.content).toMatch(/^You add numbers\.\n\n/);
    expect(system.content).toContain('Action Input:');
    expect(system.content).toContain('Final Answer:');
    expect(system.content).toContain('- add: Add two numbers');
    expect(system.content).toContain('"required":["a","b"]');
    expect(second?.body.messages.slice(1)).toEqual([
      { role: 'user', content: 'What is 2 + 3?' },
      { role: 'assistant', content: action },
      { role: 'user', content: 'Observation: 5' },
    ]);
  });

  it('tells the model when its reply cannot be parsed, and goes on once it corrects itself', async () => {
    const s = await start([textReply('I think the answer is 5.'), textReply(final)]);
    const state = await agentOn(s).execute(question());

    expect(state.status()).toBe(ExecutionStatus.Completed);
    expect(state.stopReason()).toBe(StopReason.Completed);
    expect(state.finalResponse()).toBe('5');
    expect(state.steps().map((step) => step.stepType())).toEqual([
      AgentStepType.Error,
      AgentStepType.FinalResponse,
    ]);
    expect(state.steps()[0]?.errors()).toEqual([
      {
        name: 'ReActParseError',
        message:
          'The model\'s reply does not follow the ReAct format: it has neither an "Action:" nor a "Final Answer:" line',
        code: 'REACT_PARSE_ERROR',
        details: { reply: 'I think the answer is 5.' },
      },
    ]);
    const retry = s.requests[1]?.body.messages.slice(2);
    expect(retry[0]).toEqual({ role: 'assistant', content: 'I think the answer is 5.' });
    expect(retry[1].role).toBe('user');
    expect(retry[1].content).toContain('Your last reply could not be used: it has neither');
  });

  it('ends a run that never follows the format through the error policy: Failed, RetryLimitReached', async () => {
    const s = await start([textReply('5')]);
    const state = await agentOn(s).execute(question());

    expect(state.status()).toBe(ExecutionStatus.Failed);
    expect(state.stopReason()).toBe(StopReason.RetryLimitReached);
    expect(state.stepCount()).toBe(3);
    expect(s.requests).toHaveLength(3);
    expect(state.errors().map((e) => e.name)).toEqual([
      'ReActParseError',
      'ReActParseError',
      'ReActParseError',
    ]);
  });
});
