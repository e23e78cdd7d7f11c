import type { ModelContent } from '../messages/shapes';
import { AgentMachineError } from '../state/errors';
import type { ProviderMetadata } from '../state/message';
import type { GenerateResult, StreamPart, StreamResult } from './language-model';

/**
 * A model stream that failed part-way: an `error` part carrying plain data (an OpenAI-compatible
 * `{"error": {...}}` chunk), or a stream that ended without its `finish` part. Not retried: text deltas may already have gone out to subscribers. The message
 * is the provider's; `cause` is the error value the stream carried.
 */
export class ModelStreamError extends AgentMachineError {
  static override get name(): string {
    return 'ModelStreamError';
  }

  constructor(message: string, options?: { cause?: unknown }) {
    super('MODEL_STREAM_ERROR', message, options);
    this.name = 'ModelStreamError';
  }
}

/** What a streamed call adds up to: the same fields a `doGenerate` result has. */
export type CollectedResult = Pick<GenerateResult, 'content' | 'finishReason' | 'usage' | 'providerMetadata'>;

/**
 * Reads a `doStream` result to its end, calling `onTextDelta` for each text delta, and returns the
 * content, finish reason and usage a `doGenerate` call would have returned, so a streamed step is
 * recorded exactly like a generated one. An `error` part throws (its Error, or a ModelStreamError
 * for plain data), as does a stream without a `finish` part; the stream is cancelled, which
 * closes the connection.
 *
 * @example
 * const result = await collectStream(await model.doStream(call), (delta) => process.stdout.write(delta));
 */
export async function collectStream(
  result: StreamResult,
  onTextDelta: (delta: string) => void,
): Promise<CollectedResult> {
  const reader = result.stream.getReader();
  const content: ModelContent[] = [];
  // Text and reasoning parts are joined per block id, in the order their blocks started, as
  // doGenerate returns them; provider metadata (a reasoning signature) may come on any of a block's parts.
  const blocks = new Map<string, Block>();
  let finish: Extract<StreamPart, { type: 'finish' }> | undefined;
  try {
    for (;;) {
      const { done, value: part } = await reader.read();
      if (done) break;
      switch (part.type) {
        case 'text-start':
        case 'text-end':
          block('text', part);
          break;
        case 'text-delta':
          block('text', part).text += part.delta;
          if (part.delta !== '') onTextDelta(part.delta);
          break;
        case 'reasoning-start':
        case 'reasoning-end':
          block('reasoning', part);
          break;
        case 'reasoning-delta':
          block('reasoning', part).text += part.delta;
          break;
        case 'tool-call':
        case 'tool-result':
        case 'file':
          content.push(part);
          break;
        case 'finish':
          finish = part;
          break;
        case 'error':
          // An Error is already typed and named (the provider's own class): keep it as it is.
          if (part.error instanceof Error) throw part.error;
          throw new ModelStreamError(errorMessage(part.error), { cause: part.error });
        default:
          // Sources, tool input deltas, response metadata and raw chunks are not part of a recorded step.
          break;
      }
    }
  } catch (error) {
    // Release the provider's connection; the cancel's own failure would hide the real error.
    await reader.cancel(error).catch(() => undefined);
    throw error;
  } finally {
    reader.releaseLock();
  }
  if (!finish) throw new ModelStreamError('The model stream ended without a finish part');
  return {
    content: content.filter((part) => part.type !== 'text' || part.text !== '' || part.providerMetadata),
    finishReason: finish.finishReason,
    usage: finish.usage,
    ...(finish.providerMetadata && { providerMetadata: finish.providerMetadata }),
  };

  function block(type: Block['type'], part: { id: string; providerMetadata?: ProviderMetadata }): Block {
    const key = `${type}:${part.id}`;
    let found = blocks.get(key);
    if (!found) {
      found = { type, text: '' };
      blocks.set(key, found);
      content.push(found);
    }
    if (part.providerMetadata)
      found.providerMetadata = mergeMetadata(found.providerMetadata, part.providerMetadata);
    return found;
  }
}

type Block = { type: 'text' | 'reasoning'; text: string; providerMetadata?: ProviderMetadata };

function mergeMetadata(into: ProviderMetadata | undefined, from: ProviderMetadata): ProviderMetadata {
  const merged: Record<string, Record<string, unknown>> = { ...into };
  for (const [provider, values] of Object.entries(from))
    merged[provider] = { ...merged[provider], ...values };
  return merged;
}

function errorMessage(error: unknown): string {
  if (typeof error === 'string') return error;
  const message = (error as { message?: unknown } | null)?.message;
  if (typeof message === 'string') return message;
  try {
    return `Model stream error: ${JSON.stringify(error)}`;
  } catch {
    return `Model stream error: ${String(error)}`;
  }
}
