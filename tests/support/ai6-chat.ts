import {
  AbstractChat,
  type ChatInit,
  type ChatState,
  type ChatStatus,
  DefaultChatTransport,
  type UIMessage,
} from 'ai6';
import { respondingFetch } from './ai-chat';

/** AI SDK 6's chat client (what `npm install ai` gives on Node 20), with its state kept plainly. */
export class Ai6Chat extends AbstractChat<UIMessage> {
  constructor(init: ChatInit<UIMessage>) {
    const state: ChatState<UIMessage> = {
      status: 'ready' as ChatStatus,
      error: undefined,
      messages: init.messages ?? [],
      pushMessage: (message) => {
        state.messages = [...state.messages, message];
      },
      popMessage: () => {
        state.messages = state.messages.slice(0, -1);
      },
      replaceMessage: (index, message) => {
        state.messages = state.messages.map((m, i) => (i === index ? message : m));
      },
      snapshot: (thing) => structuredClone(thing),
    };
    super({ ...init, state });
  }
}

/** As `chatClient` (support/ai-chat.ts), with AI SDK 6's chat client and transport. */
export function ai6ChatClient(api: string, id: string, init: Partial<ChatInit<UIMessage>> = {}) {
  const errors: Error[] = [];
  const { fetch: fetchAndTell, responded } = respondingFetch();
  const chat = new Ai6Chat({
    id,
    transport: new DefaultChatTransport({ api, fetch: fetchAndTell }),
    onError: (error) => errors.push(error),
    ...init,
  });
  return { chat, errors, responded };
}
