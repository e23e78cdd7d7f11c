import { createWebSocketInspector } from '@statelyai/inspect';
import { describe, expect, it } from 'vitest';
import { WebSocketServer } from 'ws';
import { z } from 'zod';
import { scriptedDriver } from '../../src/drivers/scripted-driver';
import { sanitizeAgentContext, sanitizeAgentEvent } from '../../src/inspect/stately';
import { InMemorySessionStore } from '../../src/persistence/in-memory-session-store';
import { createAgent } from '../../src/runtime/create-agent';
import { AgentState } from '../../src/state/agent-state';
import { ExecutionStatus } from '../../src/state/execution-status';
import { defineTool } from '../../src/tools/define-tool';
import { waitForState } from '../support/agents';

/** Every planted secret starts with this; none may reach the inspector. */
const SECRET = 'SECRET';
const secrets = {
  systemPrompt: `${SECRET}-system-prompt`,
  apiKey: `${SECRET}-llm-api-key`,
  user: `${SECRET}-user-message`,
  followUp: `${SECRET}-follow-up-message`,
  argument: `${SECRET}-tool-argument`,
  result: `${SECRET}-tool-result`,
  thrown: `${SECRET}-thrown-by-a-tool`,
  answer: `${SECRET}-final-answer`,
};

const vault = defineTool({
  description: 'Opens the vault',
  inputSchema: z.object({ password: z.string() }),
  execute: async () => ({ contents: secrets.result }),
});
const leaky = defineTool({
  description: 'Fails, naming what it got',
  inputSchema: z.object({ password: z.string() }),
  execute: async ({ password }) => {
    throw new Error(`${secrets.thrown}: wrong password ${password}`);
  },
});

function secretAgent(store: InMemorySessionStore) {
  return createAgent({
    driver: scriptedDriver([
      {
        text: `Opening with ${secrets.argument}`,
        toolCalls: [
          { id: 'v1', name: 'vault', args: { password: secrets.argument } },
          { id: 'l1', name: 'leaky', args: { password: secrets.argument } },
        ],
      },
      { text: secrets.answer },
    ]),
    tools: { vault, leaky },
    systemPrompt: secrets.systemPrompt,
    store,
  });
}

describe('the documented WebSocket inspector setup with the sanitizers', () => {
  it('carries no conversation, system prompt, llmConfig secret, tool argument or result', async () => {
    const server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    await new Promise<void>((resolve) => server.once('listening', () => resolve()));
    const address = server.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    const messages: string[] = [];
    server.on('connection', (socket) => socket.on('message', (data) => messages.push(String(data))));
    const inspector = createWebSocketInspector({
      url: `ws://127.0.0.1:${port}`,
      sanitizeContext: sanitizeAgentContext,
      sanitizeEvent: sanitizeAgentEvent,
    });
    const store = new InMemorySessionStore();
    try {
      const agent = secretAgent(store);
      const start = AgentState.empty()
        .withLlmConfig({ model: 'm', apiKey: secrets.apiKey })
        .withUserMessage(secrets.user);
      // A run with a session (checkpoint actors) and listeners (tool reports)...
      const done = await agent.execute(start, {
        sessionId: 'secret',
        inspect: inspector.inspect,
        onEvent: () => {},
      });
      expect(done.status()).toBe(ExecutionStatus.Completed);
      // ...and a session actor sent a user message.
      const actor = agent.createActor(done.forNextExecution(), { inspect: inspector.inspect });
      actor.start();
      actor.send({ type: 'user.message', text: secrets.followUp });
      await waitForState(actor, (s) => s.value === 'completed');
      actor.stop();

      // The inspector sends in later tasks: wait until the last run's completion has arrived.
      await new Promise<void>((resolve) => {
        const check = () => {
          if (messages.filter((m) => m.includes('"value":"completed"')).length >= 2) resolve();
          else setTimeout(check, 20);
        };
        check();
      });
      expect(messages.length).toBeGreaterThan(50);
      const leaks = messages.filter((m) => m.includes(SECRET));
      expect(leaks.map((m) => m.slice(Math.max(0, m.indexOf(SECRET) - 250), m.indexOf(SECRET) + 60))).toEqual(
        [],
      );
      // What the inspector is for is still there: states, events, a summary of the run.
      const all = messages.join('\n');
      expect(all).toContain('"type":"work"');
      expect(all).toContain('"toolName":"vault"');
      expect(all).toContain('"stepCount":2');
    } finally {
      inspector.stop();
      await store.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
