import type { ContentPart, Message, ProviderMetadata } from '../state/message';
import type {
  FileData,
  FilePart,
  ModelMessage,
  PartAs,
  PromptFileData,
  PromptMessage,
  ProviderOptions,
  TextPart,
  ToolCallPart,
  ToolResultPart,
} from './shapes';

/** The specification of the model a prompt is for: v3 (AI SDK 6) or v4 (AI SDK 7). */
export type SpecificationVersion = 'v3' | 'v4';

/** A stored message in the AI SDK's message shape, its file data written as `D`. */
type MessageAs<D> =
  | { role: 'system'; content: string; providerOptions?: ProviderOptions }
  | { role: 'user'; content: string | Array<TextPart | FilePart<D>>; providerOptions?: ProviderOptions }
  | { role: 'assistant'; content: string | Array<PartAs<D>>; providerOptions?: ProviderOptions }
  | { role: 'tool'; content: ToolResultPart[]; providerOptions?: ProviderOptions };

/**
 * How a ModelMessage and a prompt message differ: how file data is written, and whether a message
 * without parts is its text (a ModelMessage) or one text part (a prompt takes parts only).
 */
interface Form<D> {
  readonly fileData: (data: string) => D;
  readonly plainText: boolean;
}

/** The ModelMessage form: file data as base64 text or a URL; a plain message as its text. */
const MODEL_MESSAGE_FORM: Form<string | URL> = { fileData: modelFileData, plainText: true };

/**
 * A message in the prompt format of a model of specification `version`: its parts when it has
 * them (images, files, reasoning with its signature, provider-executed tools), else its text;
 * provider metadata goes back as provider options. An assistant message's own tool calls follow
 * its parts.
 *
 * @example
 * toPromptMessage(Message.user('2 + 3?'), 'v4'); // { role: 'user', content: [{ type: 'text', text: '2 + 3?' }] }
 */
export function toPromptMessage(m: Message, version: SpecificationVersion): PromptMessage {
  const form: Form<PromptFileData> = {
    fileData: (data) => promptFileData(version, modelFileData(data)),
    plainText: false,
  };
  return toAiSdkMessage(m, form) as PromptMessage;
}

/**
 * A stored message in the AI SDK's shape (the one switch over roles that ModelMessages and a model's
 * prompt share): a user message keeps its text and file parts, an assistant message its parts then
 * its own tool calls, a tool message is its one tool result; provider metadata goes back as
 * provider options.
 */
function toAiSdkMessage<D>(m: Message, form: Form<D>): MessageAs<D> {
  const options = optionsOf(m.providerMetadata);
  const plain = (text: string) => (form.plainText ? text : text ? [{ type: 'text' as const, text }] : []);
  switch (m.role) {
    case 'system':
      return { role: 'system', content: m.content, ...options };
    case 'user': {
      const content = m.parts
        ? m.parts.flatMap((p) =>
            p.type === 'text' || p.type === 'file'
              ? [partAs(p, form.fileData) as TextPart | FilePart<D>]
              : [],
          )
        : form.plainText
          ? m.content
          : [{ type: 'text' as const, text: m.content }];
      return { role: 'user', content, ...options };
    }
    case 'assistant': {
      const calls: ToolCallPart[] = (m.toolCalls ?? []).map((c) => ({
        type: 'tool-call',
        toolCallId: c.id,
        toolName: c.name,
        input: c.args,
        ...optionsOf(c.providerMetadata),
      }));
      if (!m.parts && calls.length === 0) return { role: 'assistant', content: plain(m.content), ...options };
      const parts = m.parts
        ? m.parts.map((p) => partAs(p, form.fileData))
        : m.content
          ? [{ type: 'text' as const, text: m.content }]
          : [];
      return { role: 'assistant', content: [...parts, ...calls], ...options };
    }
    case 'tool':
      return {
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            toolCallId: m.toolCallId ?? '',
            toolName: m.toolName ?? '',
            output: { type: m.isError ? 'error-text' : 'text', value: m.content },
          },
        ],
        ...options,
      };
  }
}

/** `toAiSdkMessage` in the ModelMessage form. */
export function toModelMessage(m: Message): ModelMessage {
  return toAiSdkMessage(m, MODEL_MESSAGE_FORM);
}

/**
 * A stored content part in the AI SDK's part shape, its file data converted by `fileData`.
 * Provider metadata goes back as provider options; a tool result's value as text or JSON, an error
 * as such.
 */
function partAs<D>(part: ContentPart, fileData: (data: string) => D): PartAs<D> {
  const options = optionsOf(part.providerMetadata);
  switch (part.type) {
    case 'text':
    case 'reasoning':
      return { type: part.type, text: part.text, ...options };
    case 'file':
      return {
        type: 'file',
        data: fileData(part.data),
        mediaType: part.mediaType,
        ...(part.filename !== undefined && { filename: part.filename }),
        ...options,
      };
    case 'tool-call':
      return {
        type: 'tool-call',
        toolCallId: part.toolCallId,
        toolName: part.toolName,
        input: part.input,
        ...(part.providerExecuted !== undefined && { providerExecuted: part.providerExecuted }),
        ...options,
      };
    case 'tool-result': {
      const value = part.output as ToolResultPart['output']['value'];
      const output =
        typeof value === 'string'
          ? { type: part.isError ? ('error-text' as const) : ('text' as const), value }
          : { type: part.isError ? ('error-json' as const) : ('json' as const), value };
      return {
        type: 'tool-result',
        toolCallId: part.toolCallId,
        toolName: part.toolName,
        output,
        ...options,
      };
    }
  }
}

/**
 * Stored file data (base64 text, or a URL's text) as a model takes it, in a ModelMessage and in a
 * prompt alike: an http(s) URL as a URL (the provider may fetch it or pass it on), a `data:` URL as
 * the base64 text of its bytes (as the AI SDK does: providers do not take data URLs; the media type
 * is the part's), anything else as the base64 text it is.
 *
 * @example
 * modelFileData('data:image/png;base64,iVBORw=='); // 'iVBORw=='
 * modelFileData('https://example.com/a.png');      // new URL('https://example.com/a.png')
 */
function modelFileData(data: string): string | URL {
  const inline = /^data:[^,]*?(;base64)?,/i.exec(data);
  if (inline) {
    const payload = data.slice(inline[0].length);
    if (inline[1]) return payload;
    try {
      return Buffer.from(decodeURIComponent(payload)).toString('base64');
    } catch {
      // Not percent-encoded text after all: sent as the text it is, for the provider to refuse or read.
      return data;
    }
  }
  if (/^https?:/i.test(data)) {
    try {
      return new URL(data);
    } catch {
      // Not a valid URL after all: sent as the text it is, for the provider to refuse or read.
      return data;
    }
  }
  return data;
}

/**
 * File data of a prompt part in the form of the model's specification: v4 writes it as
 * `{ type: 'data', data }` or `{ type: 'url', url }`, v3 as the bytes, base64 text or URL itself.
 */
function promptFileData(version: SpecificationVersion, data: FileData): PromptFileData {
  if (version === 'v3') return data;
  return data instanceof URL ? { type: 'url', url: data } : { type: 'data', data };
}

function optionsOf(metadata: ProviderMetadata | undefined): { providerOptions?: ProviderOptions } {
  return metadata ? { providerOptions: metadata as ProviderOptions } : {};
}
