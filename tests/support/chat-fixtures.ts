import type { UIMessage } from 'ai';
import { afterEach } from 'vitest';
import { z } from 'zod';
import { type ChatHandlerOptions, createChatHandler } from '../../src/chat/chat-handler';
import type { Driver } from '../../src/drivers/driver';
import { type ScriptEntry, scriptedDriver } from '../../src/drivers/scripted-driver';
import { InMemorySessionStore } from '../../src/persistence/in-memory-session-store';
import type { AgentDefinition } from '../../src/runtime/agent-definition';
import { createAgent } from '../../src/runtime/create-agent';
import { defineTool } from '../../src/tools/define-tool';
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

/** The text of a UI message's text parts, joined. */
export const textOf = (message: { parts: readonly unknown[] } | undefined) =>
  partsOf(message as never)
    .filter((p) => p.type === 'text')
    .map((p) => p.text)
    .join('');

/**
 * A chat whose first step calls `lookup`, which waits for `release` (its call is in flight
 * meanwhile); the model then plays `answers`, and keeps the prompts it was given.
 */
export function slowChat(answers: readonly ScriptEntry[]) {
  const started = gate();
  const release = gate();
  const lookup = defineTool({
    description: 'Look a city up',
    inputSchema: z.object({ city: z.string() }),
    execute: async ({ city }) => {
      started.open();
      await release.opened;
      return { city, celsius: 22 };
    },
  });
  const script = scriptedDriver([
    { toolCalls: [{ name: 'lookup', args: { city: 'Lisbon' }, id: 'c1' }] },
    ...answers,
  ]);
  const prompts: string[][] = [];
  const driver: Driver = {
    name: 'recording',
    infer: (state, context) => {
      prompts.push(state.messages().map((m) => `${m.role}: ${m.content}`));
      return script.infer(state, context);
    },
  };
  const store = new InMemorySessionStore();
  const agent = createAgent({ driver, tools: { lookup }, store });
  return { agent, store, prompts, started, release };
}
