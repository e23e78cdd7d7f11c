import { appendFileSync } from 'node:fs';
import { z } from 'zod';
import type { Driver } from '../../src/drivers/driver';
import { type ScriptEntry, scriptedDriver } from '../../src/drivers/scripted-driver';
import type { SessionStore } from '../../src/persistence/session-store';
import { createAgent } from '../../src/runtime/create-agent';
import { defineTool } from '../../src/tools/define-tool';

/** A scripted driver that appends `name` to the ledger file on every model call. */
function ledgered(name: string, ledger: string, script: readonly ScriptEntry[]): Driver {
  const inner = scriptedDriver(script);
  return {
    name,
    infer: (state, context) => {
      appendFileSync(ledger, `model:${name}\n`);
      return inner.infer(state, context);
    },
  };
}

/**
 * The agent of the nested restart test: the root asks its `payer` subagent, whose transfer needs
 * approval. Every model call and every transfer is written to the ledger file, so a test sees
 * what ran in which process.
 */
export function nestedApprovalAgent(
  store: SessionStore,
  ledger: string,
  options: { approvalSecret?: string } = {},
) {
  const transfer = defineTool({
    description: 'Transfer money',
    inputSchema: z.object({ to: z.string(), amount: z.number() }),
    needsApproval: true,
    execute: async (_input, { toolCallId }) => {
      appendFileSync(ledger, `transfer:${toolCallId}\n`);
      return 'sent';
    },
  });
  return createAgent({
    driver: ledgered('root', ledger, [
      { toolCalls: [{ name: 'payer', args: { task: 'pay bob 40' }, id: 'p1' }] },
      { text: 'Bob is paid.' },
    ]),
    store,
    ...options,
    subagents: {
      agents: {
        payer: {
          description: 'Pays people',
          driver: ledgered('payer', ledger, [
            { toolCalls: [{ name: 'transfer', args: { to: 'bob', amount: 40 }, id: 't1' }] },
            { text: 'paid' },
          ]),
          tools: { transfer },
        },
      },
    },
  });
}
