import { appendFileSync } from 'node:fs';
import { z } from 'zod';
import { scriptedDriver } from '../../src/drivers/scripted-driver';
import type { SessionStore } from '../../src/persistence/session-store';
import { createAgent } from '../../src/runtime/create-agent';
import { defineTool } from '../../src/tools/define-tool';

export const TRANSFER_LEDGER_ENV = 'TRANSFER_LEDGER';

/** The agent of the restart test: one transfer that needs approval, then an answer. */
export function approvalAgent(store: SessionStore, ledger: string) {
  const transfer = defineTool({
    description: 'Transfer money',
    inputSchema: z.object({ to: z.string(), amount: z.number() }),
    needsApproval: true,
    execute: async (_input, { toolCallId }) => {
      appendFileSync(ledger, `${toolCallId}\n`);
      return 'sent';
    },
  });
  return createAgent({
    driver: scriptedDriver([
      { toolCalls: [{ name: 'transfer', args: { to: 'bob', amount: 40 }, id: 't1' }] },
      { text: 'Paid.' },
    ]),
    tools: { transfer },
    store,
  });
}
