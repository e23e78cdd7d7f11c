import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  AbstractChat,
  type ChatInit,
  type ChatState,
  type ChatStatus,
  DefaultChatTransport,
  type UIMessage,
} from 'ai';
import type { ChatHandler } from '../../src/chat/chat-routes';
import { toNodeHandler } from '../../src/chat/node-handler';

/** The chat state a framework binding keeps (React's useChat keeps the same in hooks). */
class PlainChatState implements ChatState<UIMessage> {
  status: ChatStatus = 'ready';
  error: Error | undefined = undefined;
  constructor(public messages: UIMessage[] = []) {}
  pushMessage = (message: UIMessage) => {
    this.messages = [...this.messages, message];
  };
  popMessage = () => {
    this.messages = this.messages.slice(0, -1);
  };
  replaceMessage = (index: number, message: UIMessage) => {
    this.messages = this.messages.map((m, i) => (i === index ? message : m));
  };
  snapshot = <T>(thing: T): T => structuredClone(thing);
}

/** The AI SDK's own chat client, as `useChat` wraps it, without a UI framework. */
export class TestChat extends AbstractChat<UIMessage> {
  constructor(init: ChatInit<UIMessage>) {
    super({ ...init, state: new PlainChatState(init.messages ?? []) });
  }
}

/** A node:http server on 127.0.0.1 serving `handler` at /api/chat; close() ends it. */
export async function serveChat(handler: ChatHandler): Promise<{ api: string; close: () => Promise<void> }> {
  const server: Server = createServer(toNodeHandler(handler));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    api: `http://127.0.0.1:${port}/api/chat`,
    close: () =>
      new Promise((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}

/**
 * A fetch that tells when the server has answered a request of a method (its headers):
 * `responded(method)` resolves with that answer's status.
 */
export function respondingFetch() {
  const waiters: Array<{ method: string; resolve: (status: number) => void }> = [];
  const fetchAndTell: typeof fetch = async (input, options) => {
    const response = await fetch(input, options);
    const method = options?.method ?? 'GET';
    for (const waiter of waiters.filter((w) => w.method === method)) {
      waiters.splice(waiters.indexOf(waiter), 1);
      waiter.resolve(response.status);
    }
    return response;
  };
  const responded = (method: 'GET' | 'POST') =>
    new Promise<number>((resolve) => waiters.push({ method, resolve }));
  return { fetch: fetchAndTell, responded };
}

/**
 * A chat client of `id` talking to `api` with DefaultChatTransport; errors are collected, and
 * `responded(method)` resolves when the server has answered a request of that method (its headers).
 */
export function chatClient(api: string, id: string, init: Partial<ChatInit<UIMessage>> = {}) {
  const errors: Error[] = [];
  const { fetch: fetchAndTell, responded } = respondingFetch();
  const chat = new TestChat({
    id,
    transport: new DefaultChatTransport({ api, fetch: fetchAndTell }),
    onError: (error) => errors.push(error),
    ...init,
  });
  return { chat, errors, responded };
}
