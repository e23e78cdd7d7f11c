import { appendFileSync } from 'node:fs';
import { z } from 'zod';
import { scriptedDriver } from '../../src/drivers/scripted-driver';
import type { SessionStore } from '../../src/persistence/session-store';
import { createAgent } from '../../src/runtime/create-agent';
import { defineTool } from '../../src/tools/define-tool';

export const DURABLE_STEPS = 5;

/**
 * The agent of the crash tests: steps 1-4 each call `record`, which appends its call id to a
 * ledger file (so the test can count executions across processes); step 5 answers. With
 * `slowStep`, that step's model call takes a minute: a process killed then dies mid-step.
 */
export function durableAgent(store: SessionStore, ledger: string, options: { slowStep?: number } = {}) {
  const record = defineTool({
    description: 'Records that it ran',
    inputSchema: z.object({ n: z.number() }),
    execute: async (_input, { toolCallId }) => {
      appendFileSync(ledger, `${toolCallId}\n`);
      return 'recorded';
    },
  });
  const script = Array.from({ length: DURABLE_STEPS }, (_, i) => {
    const n = i + 1;
    const delayMs = options.slowStep === n ? 60_000 : undefined;
    return n < DURABLE_STEPS
      ? {
          toolCalls: [{ name: 'record', args: { n }, id: `call-${n}` }],
          usage: { inputTokens: 10, outputTokens: 2 },
          delayMs,
        }
      : { text: 'all recorded', usage: { inputTokens: 10, outputTokens: 2 }, delayMs };
  });
  return createAgent({ driver: scriptedDriver(script), tools: { record }, store });
}
