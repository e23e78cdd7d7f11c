import { z } from 'zod';
import { scriptedDriver } from '../../src/drivers/scripted-driver';
import { recordTrace, type TraceRecorder } from '../../src/inspect/trace-recorder';
import { createAgent } from '../../src/runtime/create-agent';
import { AgentState } from '../../src/state/agent-state';
import { ExecutionBudget } from '../../src/state/execution-budget';
import { defineTool } from '../../src/tools/define-tool';

/** Text a tool returns that would run as script if the viewer did not escape it. */
export const HOSTILE = '<script>window.__pwned = true</script><img src=x onerror="window.__pwned = true">';
export const TOOL_ERROR = 'weather service unavailable';
export const FINAL_ANSWER = 'Paris is warmer: 18 °C against 7 °C in Oslo.';

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Current temperature of a city; Oslo's answer carries markup that must show as text. */
export const lookup = defineTool({
  description: 'Current temperature in a city',
  inputSchema: z.object({ city: z.string() }),
  execute: async ({ city }) => {
    await pause(city === 'Paris' ? 12 : 6);
    return city === 'Oslo' ? { city, celsius: 7, note: HOSTILE } : { city, celsius: 18 };
  },
});

/** Always throws. */
export const forecast = defineTool({
  description: 'Tomorrow’s forecast',
  inputSchema: z.object({ city: z.string() }),
  execute: async () => {
    await pause(4);
    throw new Error(TOOL_ERROR);
  },
});

/**
 * The agent of the viewer tests, offline: step 1 calls lookup, step 2 calls lookup and forecast
 * (which throws), step 3 answers. Model calls take a few ms (delayMs) so the timeline has bars.
 */
export function weatherAgent() {
  return createAgent({
    driver: scriptedDriver([
      {
        text: 'Let me look up Paris first.',
        toolCalls: [{ name: 'lookup', args: { city: 'Paris' }, id: 'call-paris' }],
        usage: { inputTokens: 120, outputTokens: 30, cost: 0.0012 },
        delayMs: 15,
      },
      {
        toolCalls: [
          { name: 'lookup', args: { city: 'Oslo' }, id: 'call-oslo' },
          { name: 'forecast', args: { city: 'Oslo' }, id: 'call-forecast' },
        ],
        usage: { inputTokens: 210, outputTokens: 40, cost: 0.0021 },
        delayMs: 10,
      },
      { text: FINAL_ANSWER, usage: { inputTokens: 300, outputTokens: 25, cost: 0.003 }, delayMs: 8 },
    ]),
    tools: { lookup, forecast },
    systemPrompt: 'You compare the weather of cities.',
    budget: new ExecutionBudget({ maxSteps: 8 }),
  });
}

export const question = () => AgentState.empty().withUserMessage('Which is warmer, Paris or Oslo?');

/** Runs the weather agent with a recorder attached; resolves with the final state and the recorder. */
export async function recordedRun(
  options: Parameters<typeof recordTrace>[0] = {},
): Promise<{ state: AgentState; recorder: TraceRecorder }> {
  const recorder = recordTrace({ title: 'Weather comparison', ...options });
  const state = await weatherAgent().execute(question(), { inspect: recorder.inspect });
  return { state, recorder };
}
