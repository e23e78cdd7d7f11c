import { AgentState } from '../state/agent-state';
import { InvalidArgumentError } from '../state/errors';
import { type ContentPart, Message, type ToolCall, textOf } from '../state/message';
import { jsonValueAt, providerMetadataAt } from './model-message-values';
import { toModelMessage } from './prompt-message';
import type { ModelMessage, ModelMessageInput } from './shapes';

/**
 * A state whose conversation is these AI SDK messages: the leading system messages become its
 * system prompt, the rest its messages (see `messagesFromModelMessages`).
 *
 * @example
 * const state = fromModelMessages([{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hi' }]);
 * await agent.execute(state);
 */
export function fromModelMessages(messages: readonly ModelMessageInput[]): AgentState {
  let leading = 0;
  while (messages[leading]?.role === 'system' && typeof messages[leading]?.content === 'string') leading++;
  const system = messages.slice(0, leading).map((m) => m.content as string);
  const state = AgentState.empty().withMessages(messagesFromModelMessages(messages.slice(leading)));
  return system.length ? state.withSystemPrompt(system.join('\n\n')) : state;
}

/**
 * The AI SDK's messages as this library's: text stays text; images and files, reasoning (its
 * signature in `providerOptions`), provider-executed tools and provider options become parts and
 * provider metadata; each tool result becomes one tool message. The AI SDK's approval request and
 * response parts are left out (the library records approvals on its own steps). File data becomes
 * base64 text or a URL; a provider file reference cannot be stored and is refused.
 */
export function messagesFromModelMessages(messages: readonly ModelMessageInput[]): Message[] {
  return messages.flatMap((m, index) => fromModelMessage(m, `messages[${index}]`));
}

function fromModelMessage(m: ModelMessageInput, path: string): Message[] {
  const options = providerMetadataAt(m.providerOptions, path);
  const { role, content } = m;
  if (role === 'system') return [Message.of({ role: 'system', content: String(content), ...options })];
  if (role !== 'user' && role !== 'assistant' && role !== 'tool')
    throw new InvalidArgumentError(
      `${path}.role`,
      `${JSON.stringify(role)} is not system, user, assistant or tool`,
    );
  if (typeof content === 'string') return [Message.of({ role, content, ...options })];
  if (!Array.isArray(content))
    throw new InvalidArgumentError(`${path}.content`, 'is neither text nor an array of parts');
  content.forEach((part: unknown, i: number) => {
    if (typeof part !== 'object' || part === null)
      throw new InvalidArgumentError(`${path}.content[${i}]`, 'is not a part ({ type, ... })');
  });
  if (role === 'tool') return content.flatMap((part, i) => toolResultMessage(part, `${path}.content[${i}]`));
  const parts: ContentPart[] = [];
  const toolCalls: ToolCall[] = [];
  let rich = options.providerMetadata !== undefined;
  content.forEach((part: Record<string, unknown>, i: number) => {
    const at = `${path}.content[${i}]`;
    const metadata = providerMetadataAt(part.providerOptions, at);
    if (metadata.providerMetadata) rich = true;
    switch (part.type) {
      case 'text':
        parts.push({ type: 'text', text: String(part.text), ...metadata });
        return;
      case 'reasoning':
        parts.push({ type: 'reasoning', text: String(part.text), ...metadata });
        rich = true;
        return;
      case 'image':
      case 'file': {
        const data = storedData(part.type === 'image' ? part.image : part.data, at);
        const mediaType = typeof part.mediaType === 'string' ? part.mediaType : 'image/*';
        const filename = typeof part.filename === 'string' ? { filename: part.filename } : {};
        parts.push({ type: 'file', mediaType, data, ...filename, ...metadata });
        rich = true;
        return;
      }
      case 'tool-call':
        if (part.providerExecuted === true) {
          const input = jsonValueAt(part.input, `${at}.input`);
          parts.push({ ...callIds(part), input, providerExecuted: true, ...metadata });
          rich = true;
        } else {
          toolCalls.push(
            Object.freeze({
              id: String(part.toolCallId),
              name: String(part.toolName),
              args: jsonValueAt(part.input, `${at}.input`),
              ...metadata,
            }),
          );
        }
        return;
      case 'tool-result': {
        // A provider-executed tool's result: its JSON kept as JSON, so it goes back as it came.
        const { text, isError, json } = outputText(part.output, at);
        parts.push({
          type: 'tool-result',
          toolCallId: String(part.toolCallId),
          toolName: String(part.toolName),
          output: json === undefined ? text : json,
          ...(isError && { isError }),
          ...metadata,
        });
        rich = true;
        return;
      }
      case 'tool-approval-request':
      case 'tool-approval-response':
        return;
      default:
        throw new InvalidArgumentError(
          `${at}.type`,
          `${JSON.stringify(part.type)} is not a part this library can hold`,
        );
    }
  });
  const text = textOf(parts);
  const calls = toolCalls.length ? { toolCalls } : {};
  return [
    Message.of(
      rich ? { role, content: text, parts, ...calls, ...options } : { role, content: text, ...calls },
    ),
  ];
}

function callIds(part: Record<string, unknown>) {
  return { type: 'tool-call' as const, toolCallId: String(part.toolCallId), toolName: String(part.toolName) };
}

function toolResultMessage(part: Record<string, unknown>, path: string): Message[] {
  if (part.type === 'tool-approval-response') return [];
  if (part.type !== 'tool-result')
    throw new InvalidArgumentError(`${path}.type`, 'a tool message holds tool-result parts');
  const { text, isError } = outputText(part.output, path);
  const call = { id: String(part.toolCallId), name: String(part.toolName) };
  return [Message.toolResult(call, text, isError)];
}

/**
 * A tool result's output (any of the AI SDK's forms) as the text a tool message holds, and a JSON
 * output's value as the state keeps it.
 */
function outputText(output: unknown, path: string): { text: string; isError: boolean; json?: unknown } {
  const o = output as { type?: unknown; value?: unknown; reason?: unknown } | null;
  switch (o?.type) {
    case 'text':
      return { text: String(o.value), isError: false };
    case 'error-text':
      return { text: String(o.value), isError: true };
    case 'json':
    case 'error-json': {
      const json = jsonValueAt(o.value, `${path}.output.value`);
      return { text: JSON.stringify(json), isError: o.type === 'error-json', json };
    }
    case 'execution-denied':
      return { text: typeof o.reason === 'string' ? o.reason : 'The tool call was denied.', isError: true };
    case 'content': {
      const items = Array.isArray(o.value)
        ? (o.value as Array<{ type?: unknown; text?: unknown } | null>)
        : [];
      return {
        text: items.map((item) => (item?.type === 'text' ? String(item.text) : '')).join(''),
        isError: false,
      };
    }
    default:
      throw new InvalidArgumentError(
        `${path}.output`,
        'is not an AI SDK tool result output ({ type, value })',
      );
  }
}

/** File data in any AI SDK form as a state stores it: base64 text or a URL's text. */
function storedData(data: unknown, path: string): string {
  if (typeof data === 'string') return data;
  if (data instanceof URL) return data.href;
  if (data instanceof Uint8Array)
    return Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('base64');
  if (data instanceof ArrayBuffer) return Buffer.from(data).toString('base64');
  const wrapped = data as { type?: unknown; data?: unknown; url?: unknown; text?: unknown } | null;
  if (wrapped?.type === 'data') return storedData(wrapped.data, path);
  if (wrapped?.type === 'url') return storedData(wrapped.url, path);
  if (wrapped?.type === 'text' && typeof wrapped.text === 'string')
    return Buffer.from(wrapped.text).toString('base64');
  throw new InvalidArgumentError(
    `${path}.data`,
    'is a provider file reference or an unknown form; pass the bytes, base64 text or a URL',
  );
}

/**
 * A conversation in the AI SDK's ModelMessage form, to continue it with `generateText` or
 * `streamText`: a state's messages (traces of earlier executions included); consecutive tool
 * results make one tool message, as the AI SDK writes them. File data is written as a model's
 * prompt has it (`modelFileData`): an http(s) URL as a URL, a `data:` URL as its base64 text.
 * The system prompt is not among them
 * (AI SDK 7 refuses system messages there): pass `state.systemPrompt()` as `instructions`
 * (AI SDK 7) or `system` (AI SDK 6).
 *
 * @example
 * const { text } = await generateText({ model, instructions: state.systemPrompt(), messages: toModelMessages(state) });
 */
export function toModelMessages(source: AgentState | readonly Message[]): ModelMessage[] {
  const out: ModelMessage[] = [];
  for (const m of source instanceof AgentState ? source.messages() : source) {
    const message = toModelMessage(m);
    const last = out[out.length - 1];
    if (message.role === 'tool' && last?.role === 'tool' && !m.providerMetadata)
      last.content.push(...message.content);
    else out.push(message);
  }
  return out;
}
