/**
 * The model behind both chat routes of the chat-turn bench: a `MockLanguageModelV4` whose
 * `doStream` streams `DELTAS` text deltas, one per read (the consumer's pace, as a network stream
 * gives them). Two deltas carry timestamps (`process.hrtime`, CLOCK_MONOTONIC on Linux, so the
 * client process can compare them with its own clock): the first says when `doStream` was called
 * with how many messages its prompt had (`@s<ns>:<messages>@`), the last when it was handed out
 * (`@e<ns>@`). The mock's call log is switched off,
 * so it holds no prompt of any turn.
 */
import type { LanguageModelV4StreamPart } from '@ai-sdk/provider';
import { MockLanguageModelV4 } from 'ai/test';

const DELTAS = 50;

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: DELTAS, text: DELTAS, reasoning: undefined },
};

function deltaStream(calledAt: bigint, promptLength: number): ReadableStream<LanguageModelV4StreamPart> {
  let i = 0;
  return new ReadableStream<LanguageModelV4StreamPart>({
    pull(controller) {
      if (i === 0) {
        controller.enqueue({ type: 'stream-start', warnings: [] });
        controller.enqueue({ type: 'text-start', id: 't' });
      }
      if (i < DELTAS) {
        const delta =
          i === 0
            ? `@s${calledAt}:${promptLength}@ `
            : i === DELTAS - 1
              ? `@e${process.hrtime.bigint()}@`
              : `word${i} `;
        controller.enqueue({ type: 'text-delta', id: 't', delta });
        i++;
        return;
      }
      controller.enqueue({ type: 'text-end', id: 't' });
      controller.enqueue({ type: 'finish', finishReason: { unified: 'stop', raw: 'stop' }, usage });
      controller.close();
    },
  });
}

/** A model that streams DELTAS deltas per call; `calls` counts its calls. */
export function streamingMockModel(): { model: MockLanguageModelV4; calls: () => number } {
  let calls = 0;
  const model = new MockLanguageModelV4({
    doStream: async (options) => {
      const calledAt = process.hrtime.bigint();
      calls++;
      return { stream: deltaStream(calledAt, options.prompt.length) };
    },
  });
  Object.defineProperty(model, 'doStreamCalls', { get: () => [], set: () => {} });
  return { model, calls: () => calls };
}
