import { appendFileSync } from 'node:fs';
import { z } from 'zod';
import { abortableDelay } from '../../src/drivers/abortable-delay';
import type { Driver } from '../../src/drivers/driver';
import { scriptedDriver } from '../../src/drivers/scripted-driver';
import type { Agent } from '../../src/runtime/agent-actor';
import { createAgent } from '../../src/runtime/create-agent';
import { defineTool } from '../../src/tools/define-tool';

export const answerText = (n: number) => Array.from({ length: n }, (_, i) => `word${i}`).join(' ');

export interface TypingAgentOptions {
  /** Words of the answer. */
  readonly words: number;
  /** Delay before each word but the first, in ms (honours abort). */
  readonly wordDelayMs: number;
  /** A file the search tool appends `<tag> <toolCallId>` to: who ran the chat's first step. */
  readonly ledger?: string;
  readonly tag?: string;
}

/**
 * The chat agent of the pool tests: step 1 searches, step 2 types the answer word by word (text
 * deltas, as a streaming model sends them), aborted by a stop.
 */
export function typingAgent(options: TypingAgentOptions): Agent {
  const search = defineTool({
    description: 'Search',
    inputSchema: z.object({ query: z.string() }),
    execute: async ({ query }, { toolCallId }) => {
      if (options.ledger) appendFileSync(options.ledger, `${options.tag ?? ''} ${toolCallId}\n`);
      return `found ${query}`;
    },
  });
  const script = scriptedDriver([
    (state) =>
      state.messages().at(-1)?.role === 'tool'
        ? { text: answerText(options.words) }
        : { toolCalls: [{ name: 'search', args: { query: 'lisbon' } }] },
  ]);
  const typing = typingDriver(script, (i, signal) =>
    i > 0 ? abortableDelay(options.wordDelayMs, signal) : undefined,
  );
  return createAgent({ driver: typing, tools: { search } });
}

/**
 * A driver that answers as `script` does and reports its answer's text word by word (text deltas,
 * as a streaming model sends them), awaiting `pause(index, signal)` before each word.
 */
export function typingDriver(
  script: Driver,
  pause: (index: number, signal: AbortSignal) => Promise<void> | undefined,
  name = 'typing',
): Driver {
  return {
    name,
    async infer(state, context) {
      const answered = await script.infer(state, context);
      const text = answered.currentStep()?.outputText() ?? '';
      const ids = {
        agentId: state.agentId(),
        parentAgentId: state.parentAgentId(),
        executionId: state.executionId() ?? '',
        stepNumber: state.stepCount() + 1,
      };
      for (const [i, word] of (text.match(/\S+\s*/g) ?? []).entries()) {
        await pause(i, context.signal);
        context.report({ type: 'text.delta', ...ids, delta: word });
      }
      return answered;
    },
  };
}
