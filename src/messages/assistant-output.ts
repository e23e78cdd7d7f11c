import { type ContentPart, Message, type ProviderMetadata, type ToolCall } from '../state/message';
import type { FileData, ModelContent, ResultFileData } from './shapes';

/** What a model's answer adds to the conversation: its text, its tool calls, and the message. */
export interface AssistantOutput {
  readonly text: string;
  /** Calls of the agent's own tools, to run locally. */
  readonly toolCalls: ToolCall[];
  readonly message: Message;
}

/**
 * The assistant message of a model's answer. Text and the calls of the agent's own tools make a
 * plain message; reasoning (with its signature), files, provider-executed tool calls and their
 * results, and provider metadata on text make it keep `parts` too, so the next call sends them
 * back as the provider returned them. Provider-executed calls are never run locally. Sources,
 * approval requests and custom parts are not recorded.
 *
 * @example
 * assistantOutput([{ type: 'reasoning', text: 'Add them.', providerMetadata: { anthropic: { signature: 's' } } },
 *   { type: 'text', text: '5' }]).message.parts; // both parts, the signature kept
 */
export function assistantOutput(content: readonly ModelContent[]): AssistantOutput {
  let text = '';
  let rich = false;
  const toolCalls: ToolCall[] = [];
  const parts: ContentPart[] = [];
  for (const part of content) {
    const metadata = part.providerMetadata
      ? { providerMetadata: part.providerMetadata as ProviderMetadata }
      : {};
    switch (part.type) {
      case 'text':
        text += part.text;
        parts.push({ type: 'text', text: part.text, ...metadata });
        if (part.providerMetadata) rich = true;
        break;
      case 'reasoning':
        parts.push({ type: 'reasoning', text: part.text, ...metadata });
        rich = true;
        break;
      case 'file':
        parts.push({
          type: 'file',
          mediaType: part.mediaType,
          data: storedFileData(fileData(part.data)),
          ...metadata,
        });
        rich = true;
        break;
      case 'tool-call':
        if (part.providerExecuted) {
          const input = parseArgs(part.input);
          const { toolCallId, toolName } = part;
          parts.push({ type: 'tool-call', toolCallId, toolName, input, providerExecuted: true, ...metadata });
          rich = true;
        } else {
          toolCalls.push(
            Object.freeze({
              id: part.toolCallId,
              name: part.toolName,
              args: parseArgs(part.input),
              ...metadata,
            }),
          );
        }
        break;
      case 'tool-result':
        parts.push({
          type: 'tool-result',
          toolCallId: part.toolCallId,
          toolName: part.toolName,
          output: part.result,
          ...(part.isError && { isError: true }),
          ...metadata,
        });
        rich = true;
        break;
      default:
        break;
    }
  }
  const message = rich
    ? Message.of({
        role: 'assistant',
        content: text,
        parts,
        ...(toolCalls.length > 0 && { toolCalls }),
      })
    : Message.assistant(text, toolCalls);
  return { text, toolCalls, message };
}

/** A file part's data from either specification, as bytes, base64 text or a URL. */
function fileData(data: ResultFileData): FileData {
  if (typeof data === 'string' || data instanceof Uint8Array) return data;
  return data.type === 'url' ? data.url : data.data;
}

/** File data as a state stores it (JSON): base64 text, or a URL's text. */
function storedFileData(data: FileData): string {
  if (data instanceof URL) return data.href;
  if (typeof data === 'string') return data;
  return Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('base64');
}

/**
 * Tool arguments arrive as JSON text. Text that does not parse is kept as it is (a string), so
 * the tool executor can tell the model its arguments were not valid JSON; a JSON string is kept as
 * its JSON text too, which does parse, so the model is told it sent a string where an object was
 * expected. An own `__proto__` key is kept as data, as `JSON.parse` makes it.
 *
 * @example
 * parseArgs('{"a":1}'); // { a: 1 }
 * parseArgs('{"a":1');  // '{"a":1' (reported by the tool executor as not valid JSON)
 * parseArgs('"a"');     // '"a"' (reported as "expected object, received string")
 */
export function parseArgs(input: string): unknown {
  if (input.trim() === '') return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(input);
  } catch {
    return input;
  }
  return typeof parsed === 'string' ? input : parsed;
}
