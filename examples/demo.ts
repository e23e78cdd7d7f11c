/**
 * `npm run demo`: an agent with tools answers a question, printing each step as it goes.
 * Offline by default: a scripted model plays the task.
 */
import { z } from 'zod';
import { AgentState, createAgent, defineTool, ExecutionBudget, scriptedDriver } from '../src/index';

const weather = defineTool({
  description: 'Current temperature in a city, in °C',
  inputSchema: z.object({ city: z.string() }),
  execute: async ({ city }) => ({ city, celsius: { Paris: 18, Oslo: 7, Lisbon: 24 }[city] ?? 15 }),
});
const convert = defineTool({
  description: 'Convert °C to °F',
  inputSchema: z.object({ celsius: z.number() }),
  execute: async ({ celsius }) => Math.round((celsius * 9) / 5 + 32),
});

const model = scriptedDriver([
  {
    text: 'Let me look up both cities.',
    toolCalls: [
      { name: 'weather', args: { city: 'Paris' } },
      { name: 'weather', args: { city: 'Oslo' } },
    ],
    usage: { inputTokens: 120, outputTokens: 40 },
  },
  { toolCalls: [{ name: 'convert', args: { celsius: 18 } }], usage: { inputTokens: 210, outputTokens: 18 } },
  {
    text: 'Paris is warmer: 18 °C (64 °F), against 7 °C in Oslo.',
    usage: { inputTokens: 260, outputTokens: 22 },
  },
]);

const agent = createAgent({
  driver: model,
  tools: { weather, convert },
  systemPrompt: 'You compare the weather of cities.',
  budget: new ExecutionBudget({ maxSteps: 8, maxTokens: 5_000 }),
});

const actor = agent.createActor(
  AgentState.empty().withUserMessage('Which is warmer right now, Paris or Oslo?'),
);
actor.on('step.started', (e) => console.log(`step ${e.stepNumber}`));
actor.on('tool.finished', (e) =>
  console.log(`  tool ${e.toolName} ${e.ok ? 'ok' : `failed: ${e.error?.message}`}`),
);
actor.on('step.finished', (e) =>
  console.log(`  -> ${e.stepType}, ${e.usage.totalTokens} tokens, ${e.durationMs.toFixed(1)} ms`),
);
actor.on('execution.finished', (e) =>
  console.log(`execution ${e.status} (${e.stopReason}) after ${e.stepCount} steps`),
);
actor.subscribe({ error: (error) => console.error(error) });

actor.start();
actor.send({ type: 'user.message', text: 'Please answer in one sentence.' });
await new Promise<void>((resolve) => {
  const sub = actor.subscribe((s) => {
    if (s.matches('completed') || s.matches('stopped') || s.matches('failed')) {
      sub.unsubscribe();
      resolve();
    }
  });
});
const state = actor.getSnapshot().context.state;
console.log(`\nfinal answer: ${state.finalResponse()}`);
console.log(`usage: ${JSON.stringify(state.usage())}`);
actor.stop();
