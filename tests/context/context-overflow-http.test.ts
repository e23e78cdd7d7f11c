import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent } from '../../src/runtime/create-agent';
import { AgentState } from '../../src/state/agent-state';
import { ExecutionBudget } from '../../src/state/execution-budget';
import { ExecutionStatus } from '../../src/state/execution-status';
import type { AgentEvent, ContextCompactedEvent } from '../../src/state/loop-events';
import { StopReason } from '../../src/state/stop-reason';
import { defineTool } from '../../src/tools/define-tool';
import {
  localModel,
  type RecordedRequest,
  type Reply,
  serverPerTest,
  textReply,
} from '../support/openai-server';

const TASK = 'Read the first 40 pages of the log.';
const read = defineTool({
  description: 'Read one page of the log',
  inputSchema: z.object({ page: z.number() }),
  execute: async ({ page }) => `Page ${page}: ${'GET /index.html 200 12ms. '.repeat(40)}`,
});

/** The server's token count of a request: its messages' JSON, 4 characters a token. */
const tokensOf = (request: RecordedRequest) => Math.ceil(JSON.stringify(request.body.messages).length / 4);

/** OpenAI's answer to a prompt over `window` tokens (HTTP 400, code context_length_exceeded). */
const refusal = (window: number, tokens: number): Reply => ({
  type: 'error',
  status: 400,
  code: 'context_length_exceeded',
  message: `This model's maximum context length is ${window} tokens. However, your messages resulted in ${tokens} tokens. Please reduce the length of the messages.`,
});

/** A model with a `window`-token context reading `pages` pages, one per step. */
function readingServer(window: number, pages: number) {
  let page = 0;
  return (request: RecordedRequest): Reply => {
    const tokens = tokensOf(request);
    if (tokens > window) return refusal(window, tokens);
    const usage = { prompt: tokens, completion: 10 };
    if (page >= pages) return textReply(`Read ${page} pages.`, usage);
    page++;
    return {
      type: 'message',
      toolCalls: [{ id: `call_${page}`, name: 'read', arguments: { page } }],
      usage,
    };
  };
}

const compactions = (events: AgentEvent[]) =>
  events.filter((e): e is ContextCompactedEvent => e.type === 'context.compacted');

describe('a prompt an OpenAI-compatible server refuses as too long (loopback HTTP)', () => {
  const start = serverPerTest();

  it.each([
    ['generated', false],
    ['streamed', true],
  ])(
    'gets one forced compaction and the step is sent again; later prompts keep within the window it named (%s)',
    async (_label, stream) => {
      // maxInputTokens is set above the server's real window: only the refusals can tell
      const server = await start(readingServer(6_000, 40));
      const agent = createAgent({
        model: localModel(server),
        tools: { read },
        budget: new ExecutionBudget({ maxSteps: 60 }),
        context: { maxInputTokens: 100_000 },
        modelOptions: { stream },
      });
      const events: AgentEvent[] = [];
      const done = await agent.execute(AgentState.empty().withUserMessage(TASK), {
        onEvent: (e) => events.push(e),
      });

      expect(done.status()).toBe(ExecutionStatus.Completed);
      expect(done.finalResponse()).toBe('Read 40 pages.');
      expect(done.stepCount()).toBe(41);
      expect(done.errors()).toEqual([]);
      // refused once: the refusal named the window, which later prompts are kept within
      const refused = server.requests.filter((r) => tokensOf(r) > 6_000);
      expect(refused).toHaveLength(1);
      const compacted = compactions(events);
      expect(compacted[0]?.forced).toBe(true);
      expect(compacted.length).toBeGreaterThan(1);
      for (const event of compacted) expect(event.tokensAfter).toBeLessThan(6_000);
      const index = server.requests.indexOf(refused[0] as RecordedRequest);
      const retry = server.requests[index + 1] as RecordedRequest;
      expect(tokensOf(retry)).toBeLessThanOrEqual(6_000);
      expect(JSON.stringify(retry.body.messages)).toContain(TASK);
      // every step is recorded in full, whatever its prompt was
      expect(done.steps()[0]?.toolExecutions()[0]?.value()).toContain('Page 1:');
    },
  );

  it('fails the run with the provider error when the compacted prompt is refused too', async () => {
    const server = await start((request, index) => {
      // two steps are accepted; then every prompt is refused, however small
      if (index < 2) {
        const call = { id: `call_${index}`, name: 'read', arguments: { page: index } };
        return { type: 'message', toolCalls: [call] };
      }
      return refusal(100, tokensOf(request));
    });
    const agent = createAgent({
      model: localModel(server),
      tools: { read },
      context: { maxInputTokens: 100_000 },
    });
    const done = await agent.execute(AgentState.empty().withUserMessage(TASK));

    expect(done.status()).toBe(ExecutionStatus.Failed);
    expect(done.stopReason()).toBe(StopReason.ErrorForbade);
    expect(done.errors().at(-1)?.message).toContain('maximum context length is 100 tokens');
    // the refused step was sent twice, the second time compacted (page 0's result elided), not more
    expect(server.requests).toHaveLength(4);
    const [, , refused, retried] = server.requests as RecordedRequest[];
    expect(tokensOf(retried as RecordedRequest)).toBeLessThan(tokensOf(refused as RecordedRequest));
    expect(JSON.stringify(retried?.body.messages)).not.toContain('Page 0:');
  });

  it('is not sent again when nothing can be compacted (the task and the latest step alone are too long)', async () => {
    const server = await start((request, index) =>
      index === 0
        ? { type: 'message', toolCalls: [{ id: 'call_1', name: 'read', arguments: { page: 1 } }] }
        : refusal(100, tokensOf(request)),
    );
    const agent = createAgent({
      model: localModel(server),
      tools: { read },
      context: { maxInputTokens: 100_000 },
    });
    const done = await agent.execute(AgentState.empty().withUserMessage(TASK));
    expect(done.status()).toBe(ExecutionStatus.Failed);
    expect(server.requests).toHaveLength(2);
  });
});
