import type { ContentPart, Message, ProviderMetadata } from '../state/message';
import { contentPartAs } from '../state/model-messages';
import { type CallableModel, type PromptMessage, promptFileData } from './language-model';

type Version = CallableModel['specificationVersion'];
type AssistantPart = Extract<PromptMessage, { role: 'assistant' }>['content'][number];

/**
 * A message in the prompt format of a model of specification `version`: its parts when it has
 * them (images, files, reasoning with its signature, provider-executed tools), else its text;
 * provider metadata goes back as provider options. An assistant message's own tool calls follow
 * its parts.
 *
 * @example
 * toPromptMessage(Message.user('2 + 3?'), 'v4'); // { role: 'user', content: [{ type: 'text', text: '2 + 3?' }] }
 */
export function toPromptMessage(m: Message, version: Version): PromptMessage {
  const options = m.providerMetadata ? { providerOptions: m.providerMetadata } : {};
  if (m.role === 'system') return { role: 'system', content: m.content, ...options };
  if (m.role === 'user') {
    const content = m.parts
      ? m.parts.flatMap((part) =>
          part.type === 'text' || part.type === 'file' ? [promptPart(part, version)] : [],
        )
      : [{ type: 'text' as const, text: m.content }];
    return {
      role: 'user',
      content: content as Extract<PromptMessage, { role: 'user' }>['content'],
      ...options,
    };
  }
  if (m.role === 'assistant') {
    const content: AssistantPart[] = m.parts
      ? m.parts.map((part) => promptPart(part, version))
      : m.content
        ? [{ type: 'text', text: m.content }]
        : [];
    for (const c of m.toolCalls ?? [])
      content.push({
        type: 'tool-call',
        toolCallId: c.id,
        toolName: c.name,
        input: c.args,
        ...providerOptions(c.providerMetadata),
      });
    return { role: 'assistant', content, ...options };
  }
  return {
    role: 'tool',
    content: [
      {
        type: 'tool-result',
        toolCallId: m.toolCallId ?? '',
        toolName: m.toolName ?? '',
        output: m.isError ? { type: 'error-text', value: m.content } : { type: 'text', value: m.content },
      },
    ],
    ...options,
  };
}

function promptPart(part: ContentPart, version: Version): AssistantPart {
  return contentPartAs(part, (data) => promptFileData(version, modelData(data))) as AssistantPart;
}

function providerOptions(metadata: ProviderMetadata | undefined) {
  return metadata ? { providerOptions: metadata as PromptMessage['providerOptions'] } : {};
}

/**
 * Stored file data (base64 text, or a URL's text) as a model takes it: an http(s) URL as a URL
 * (the provider may fetch it or pass it on), a base64 `data:` URL as its base64 text (as the AI SDK
 * does: providers do not take data URLs), anything else as the base64 text it is.
 */
function modelData(data: string): URL | string {
  const inline = /^data:[^,]*;base64,/i.exec(data);
  if (inline) return data.slice(inline[0].length);
  if (/^https?:\/\//i.test(data)) {
    try {
      return new URL(data);
    } catch {
      // Not a valid URL after all: sent as the text it is, for the provider to refuse or read.
      return data;
    }
  }
  return data;
}
