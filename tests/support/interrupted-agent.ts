import { z } from 'zod';
import { scriptedDriver } from '../../src/drivers/scripted-driver';
import type { SessionStore } from '../../src/persistence/session-store';
import { createAgent } from '../../src/runtime/create-agent';
import { defineTool } from '../../src/tools/define-tool';

/** The line the crash child prints once an unsafe `pay` call has started: the parent kills it then. */
export const CRASH_POINT = 'crash point';

export const INTERRUPTED_SECRET = 'interrupted-secret';

/**
 * The agent of the interrupted-call tests: an unsafe `pay` and a safe `lookup`, called by the root
 * (`nested: false`: calls r1, s1) or by its `payer` subagent (call j1, whose calls are pay-1,
 * look-1); with `asked`, `pay` needs approval too. With `approvalSecret`. `onPay` runs inside `pay` before its effect (the crash child
 * waits there to be killed).
 */
export function interruptedAgent(
  store: SessionStore | undefined,
  options: { readonly nested: boolean; readonly asked?: boolean; readonly onPay?: () => Promise<void> },
) {
  const effects: string[] = [];
  const pay = defineTool({
    description: 'Pays',
    inputSchema: z.object({ amount: z.number() }),
    effect: 'unsafe',
    needsApproval: options.asked ?? false,
    execute: async ({ amount }, { toolCallId }) => {
      await options.onPay?.();
      effects.push(toolCallId);
      return `paid ${amount}`;
    },
  });
  const lookup = defineTool({
    description: 'Looks up',
    inputSchema: z.object({ q: z.string() }),
    execute: async ({ q }) => `found ${q}`,
  });
  const calls = (pay: string, look: string) => [
    { id: pay, name: 'pay', args: { amount: 5 } },
    { id: look, name: 'lookup', args: { q: 'bob' } },
  ];
  const payer = {
    description: 'Pays people',
    driver: scriptedDriver([{ toolCalls: calls('pay-1', 'look-1') }, { text: 'paid' }]),
    tools: { pay, lookup },
    subagents: { agents: {} },
  };
  const agent = createAgent({
    driver: scriptedDriver(
      options.nested
        ? [{ toolCalls: [{ id: 'j1', name: 'payer', args: { task: 'pay bob 5' } }] }, { text: 'root done' }]
        : [{ toolCalls: calls('r1', 's1') }, { text: 'root done' }],
    ),
    tools: { pay, lookup },
    ...(store && { store }),
    approvalSecret: INTERRUPTED_SECRET,
    subagents: { agents: { payer } },
  });
  return { agent, effects };
}
