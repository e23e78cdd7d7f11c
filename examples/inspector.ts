/**
 * `npx tsx examples/inspector.ts`: three ways to see a run.
 *
 * 1. Live, in the Stately inspector: `createWebSocketInspector` from `@statelyai/inspect` (the
 *    XState v5 inspector; `@xstate/inspect` is for XState v4 only) sends every actor, event and
 *    snapshot over a WebSocket. This example starts a small local WebSocket server and prints what
 *    arrives, so it runs offline; set INSPECTOR_URL=ws://host:port to send to your own receiver
 *    (for the Stately UI: `createInspectorServer()` from '@statelyai/inspect/server', which serves
 *    a page that loads the UI from stately.ai).
 * 2. Recorded: `recordTrace()` keeps the actors, events, snapshots, state paths and emitted events
 *    with timestamps, and writes them as JSON (test-output/example-trace.json).
 * 3. Afterwards: `renderRunViewer()` turns the trace into one self-contained HTML page
 *    (test-output/example-run.html); the CLI does the same: `agent-machine view trace.json -o run.html`.
 *
 * In a browser app, use the browser inspector instead, which opens the Stately UI in a new tab:
 *
 *   import { createBrowserInspector } from '@statelyai/inspect';
 *   const inspector = createBrowserInspector({ sanitizeContext: sanitizeAgentContext });
 *   const actor = agent.createActor(state, { inspect: inspector.inspect });
 */
import { writeFileSync } from 'node:fs';
import { createWebSocketInspector } from '@statelyai/inspect';
import { WebSocketServer } from 'ws';
import { z } from 'zod';
import { AgentState, createAgent, defineTool, scriptedDriver } from '../src/index';
import {
  combineInspectors,
  recordTrace,
  renderRunViewer,
  sanitizeAgentContext,
  sanitizeAgentEvent,
} from '../src/inspect/index';

const weather = defineTool({
  description: 'Current temperature in a city, in °C',
  inputSchema: z.object({ city: z.string() }),
  execute: async ({ city }) => ({ city, celsius: { Paris: 18, Oslo: 7 }[city] ?? 15 }),
});

const agent = createAgent({
  driver: scriptedDriver([
    {
      toolCalls: [{ name: 'weather', args: { city: 'Paris' } }],
      usage: { inputTokens: 120, outputTokens: 20 },
    },
    {
      toolCalls: [{ name: 'weather', args: { city: 'Oslo' } }],
      usage: { inputTokens: 160, outputTokens: 20 },
    },
    { text: 'Paris is warmer: 18 °C against 7 °C.', usage: { inputTokens: 200, outputTokens: 15 } },
  ]),
  tools: { weather },
  systemPrompt: 'You compare the weather of cities.',
});

// A local receiver standing in for the inspector UI, unless INSPECTOR_URL points elsewhere.
let server: WebSocketServer | undefined;
let url = process.env.INSPECTOR_URL;
let received = 0;
let sawCompletion: () => void = () => {};
const completionSeen = new Promise<void>((resolve) => {
  sawCompletion = resolve;
});
if (!url) {
  server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise<void>((resolve) => server?.once('listening', () => resolve()));
  const address = server.address();
  url = `ws://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  server.on('connection', (socket) =>
    socket.on('message', (data) => {
      received++;
      const event = JSON.parse(String(data)) as {
        type: string;
        sessionId: string;
        event?: { type: string };
        snapshot?: { value?: unknown };
      };
      console.log(
        `inspector <- ${event.type} ${event.sessionId}${event.event ? ` ${event.event.type}` : ''}`,
      );
      if (event.type === '@xstate.snapshot' && event.snapshot?.value === 'completed') sawCompletion();
    }),
  );
}

const stately = createWebSocketInspector({
  url,
  // Show the AgentState as a summary (status, steps, usage) rather than the whole conversation.
  sanitizeContext: sanitizeAgentContext,
  sanitizeEvent: sanitizeAgentEvent,
});
const recorder = recordTrace({ title: 'Which is warmer?' });

const state = await agent.execute(AgentState.empty().withUserMessage('Which is warmer, Paris or Oslo?'), {
  // One `inspect` option, two observers.
  inspect: combineInspectors(recorder.inspect, stately.inspect),
});
console.log(
  `\n${state.status()} (${state.stopReason()}) after ${state.stepCount()} steps: ${state.finalResponse()}`,
);

await recorder.write('test-output/example-trace.json');
writeFileSync('test-output/example-run.html', renderRunViewer(recorder.trace()));
console.log('wrote test-output/example-trace.json and test-output/example-run.html');

// The inspector's sends are deferred: wait for the last snapshot to arrive (or, with a receiver of
// your own, a moment), then close the connection so the program can end.
await (server ? completionSeen : new Promise((resolve) => setTimeout(resolve, 500)));
stately.stop();
if (server) {
  console.log(`the local receiver got ${received} inspection events`);
  await new Promise<void>((resolve) => server?.close(() => resolve()));
}
