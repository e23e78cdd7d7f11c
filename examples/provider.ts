/**
 * The demo's agent on a real model: any OpenAI-compatible chat-completions API (OpenAI, a local
 * Ollama or vLLM server, a gateway), through the AI SDK's @ai-sdk/openai-compatible provider.
 * The answer streams to the terminal as it is written.
 *
 *   OPENAI_API_KEY=sk-... npx tsx examples/provider.ts
 *   OPENAI_BASE_URL=http://127.0.0.1:11434/v1 OPENAI_API_KEY=ollama OPENAI_MODEL=llama3.2 npx tsx examples/provider.ts
 *   npx tsx examples/provider.ts --react      # for a model without native tool calling
 *
 * Without OPENAI_API_KEY it prints how to set one and exits (status 0): nothing is sent anywhere.
 */
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { z } from 'zod';
import { AgentState, createAgent, defineTool, ExecutionBudget, modelDriver, reactDriver } from '../src/index';

const apiKey = process.env.OPENAI_API_KEY;
if (!apiKey) {
  console.log(
    [
      'Set OPENAI_API_KEY to run this example against a real model, e.g.',
      '  OPENAI_API_KEY=sk-... npx tsx examples/provider.ts',
      'Optional: OPENAI_BASE_URL (default https://api.openai.com/v1), OPENAI_MODEL (default gpt-4o-mini),',
      'and --react for a model without native tool calling.',
    ].join('\n'),
  );
  process.exit(0);
}
const baseURL = process.env.OPENAI_BASE_URL ?? 'https://api.openai.com/v1';
const modelId = process.env.OPENAI_MODEL ?? 'gpt-4o-mini';

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

// includeUsage asks for token usage in streamed replies, which the token budget needs.
const provider = createOpenAICompatible({ name: 'openai-compatible', baseURL, apiKey, includeUsage: true });
const model = provider.chatModel(modelId);
const options = { stream: true, maxRetries: 2 } as const;
const driver = process.argv.includes('--react') ? reactDriver(model, options) : modelDriver(model, options);

const agent = createAgent({
  driver,
  tools: { weather, convert },
  systemPrompt: 'You compare the weather of cities. Use the tools; answer in one sentence.',
  budget: new ExecutionBudget({ maxSteps: 8, maxTokens: 20_000, maxSeconds: 120 }),
});

const actor = agent.createActor(
  AgentState.empty().withUserMessage('Which is warmer right now, Paris or Oslo?'),
);
actor.on('step.started', (e) => process.stdout.write(`\n[step ${e.stepNumber}] `));
actor.on('text.delta', (e) => process.stdout.write(e.delta));
actor.on('tool.finished', (e) =>
  process.stdout.write(`\n  tool ${e.toolName} ${e.ok ? 'ok' : `failed: ${e.error?.message}`}`),
);
actor.on('execution.finished', (e) =>
  console.log(`\n\nexecution ${e.status} (${e.stopReason}) after ${e.stepCount} steps`),
);

const state = await new Promise<AgentState>((resolve, reject) => {
  actor.subscribe({
    next: (s) => {
      if (s.matches('completed') || s.matches('stopped') || s.matches('failed')) resolve(s.context.state);
    },
    error: reject,
  });
  actor.start();
  actor.send({ type: 'execute' });
});
actor.stop();

console.log(`final answer: ${state.finalResponse() || '(none)'}`);
console.log(`usage: ${JSON.stringify(state.usage())}`);
for (const error of state.errors()) console.error(`error: ${error.name}: ${error.message}`);
process.exitCode = state.status() === 'failed' ? 1 : 0;
