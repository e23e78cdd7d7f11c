import type { UIMessage } from 'ai';
import { afterEach } from 'vitest';
import { z } from 'zod';
import {
  type AgentDefinition,
  type ChatHandlerOptions,
  createAgent,
  createChatHandler,
  defineTool,
  InMemorySessionStore,
} from '../../src/index';
import { serveChat } from './ai-chat';
import type { Chunk } from './ui-stream';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A chat handler over `definition` (with an in-memory store) on a loopback node:http server. */
export async function startChat(
  definition: Omit<AgentDefinition, 'store'>,
  options: Omit<ChatHandlerOptions, 'agent'> = {},
) {
  const store = new InMemorySessionStore();
  const logged: unknown[] = [];
  const agent = createAgent({ ...definition, store });
  const server = await serveChat(
    createChatHandler({ agent, onError: (error) => logged.push(error), ...options }),
  );
  cleanups.push(server.close);
  return { api: server.api, store, logged };
}

export const lookup = defineTool({
  description: 'Look a city up',
  inputSchema: z.object({ city: z.string() }),
  execute: async ({ city }) => ({ city, celsius: 22 }),
});

export function transferTool(ledger: string[]) {
  return defineTool({
    description: 'Send money',
    inputSchema: z.object({ to: z.string(), amount: z.number() }),
    needsApproval: true,
    execute: async ({ to, amount }) => {
      ledger.push(`${to}:${amount}`);
      return `sent ${amount} to ${to}`;
    },
  });
}

/** A promise and the function that resolves it: a tool waits on it until the test lets it go. */
export function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { open, opened };
}

export const types = (chunks: readonly Chunk[]) => chunks.map((c) => c.type);
// biome-ignore lint/suspicious/noExplicitAny: parts of the client's messages are checked by shape
export const partsOf = (message: UIMessage | undefined): any[] => message?.parts ?? [];
