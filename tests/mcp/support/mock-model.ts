/** Helpers of the MCP tests: a mock model playing turns, what it was offered, a question, a process check. */
import type { LanguageModelV4CallOptions, LanguageModelV4GenerateResult } from '@ai-sdk/provider';
import { MockLanguageModelV4 } from 'ai/test';
import { AgentState } from '../../../src/state/agent-state';

export type Turn = { call: string; args?: Record<string, unknown> } | { text: string };

/**
 * A mock model that plays one turn per step of an execution (a tool call or a text answer; the
 * step is read from the prompt, so every execution starts at the first turn), recording what it was offered.
 */
export function model(turns: readonly Turn[]) {
  return new MockLanguageModelV4({
    modelId: 'm',
    doGenerate: async ({ prompt }): Promise<LanguageModelV4GenerateResult> => {
      const step = prompt.filter((message) => message.role === 'assistant').length;
      const turn = turns[Math.min(step, turns.length - 1)] as Turn;
      const usage = {
        inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: undefined },
        outputTokens: { total: 1, text: 1, reasoning: undefined },
      };
      if ('text' in turn)
        return {
          content: [{ type: 'text', text: turn.text }],
          finishReason: { unified: 'stop', raw: 'stop' },
          usage,
          warnings: [],
        };
      return {
        content: [
          {
            type: 'tool-call',
            toolCallId: `c${step + 1}`,
            toolName: turn.call,
            input: JSON.stringify(turn.args ?? {}),
          },
        ],
        finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
        usage,
        warnings: [],
      };
    },
  });
}

export const offered = (call: LanguageModelV4CallOptions | undefined) =>
  (call?.tools ?? []).map((t) => t.name);
export const ask = () => AgentState.empty().withUserMessage('go');
export const isRunning = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
