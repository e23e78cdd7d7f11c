import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { z } from 'zod';
import { scriptedDriver } from '../../src/drivers/scripted-driver';
import type { Hook } from '../../src/hooks/hook';
import type { SessionStore } from '../../src/persistence/session-store';
import { createAgent } from '../../src/runtime/create-agent';
import type { TelemetryOptions } from '../../src/telemetry/telemetry-options';
import { defineTool, type ToolReconcile } from '../../src/tools/define-tool';

/** Where the unsafe call of the reconcile tests lies: in the root, or inside its `payer` subagent. */
export type ReconcilePlace = 'root' | 'subagent';

/** The lines of the ledger: `<idempotency key> <tool call id>` per `pay` that ran. */
export function ledgerLines(ledger: string): string[] {
  return existsSync(ledger) ? readFileSync(ledger, 'utf8').trim().split('\n').filter(Boolean) : [];
}

/**
 * The agent of the reconcile tests: `pay` (unsafe) appends its idempotency key and call id to the
 * ledger, then (with `hang`) never returns, so a process killed then leaves the call interrupted
 * after its effect. `reconcile` is the tool's, when given. In `subagent` place, the root asks
 * `payer`, whose step calls `pay`.
 */
export function reconcileAgent(
  store: SessionStore,
  ledger: string,
  options: {
    place: ReconcilePlace;
    hang?: boolean;
    reconcile?: ToolReconcile<{ amount: number }>;
    timeoutMs?: number;
    hooks?: Hook[];
    telemetry?: TelemetryOptions;
  },
) {
  const pay = defineTool({
    description: 'Pays an amount',
    inputSchema: z.object({ amount: z.number() }),
    effect: 'unsafe',
    ...(options.timeoutMs !== undefined && { timeoutMs: options.timeoutMs }),
    ...(options.reconcile && { reconcile: options.reconcile }),
    execute: async ({ amount }, { toolCallId, idempotencyKey }) => {
      appendFileSync(ledger, `${idempotencyKey} ${toolCallId}\n`);
      // a timer holds the process open: a bare pending promise would let it exit as soon as
      // nothing else is scheduled, before the test kills it
      if (options.hang) await new Promise(() => setInterval(() => {}, 60_000));
      return `paid ${amount}`;
    },
  });
  const payScript = scriptedDriver([
    { toolCalls: [{ name: 'pay', args: { amount: 5 }, id: 'pay-1' }] },
    { text: 'paid it' },
  ]);
  if (options.place === 'root')
    return createAgent({
      driver: payScript,
      tools: { pay },
      store,
      hooks: options.hooks ?? [],
      ...(options.telemetry && { telemetry: options.telemetry }),
    });
  return createAgent({
    driver: scriptedDriver([
      { toolCalls: [{ name: 'payer', args: { task: 'pay 5' }, id: 'sub-1' }] },
      { text: 'the payer is done' },
    ]),
    store,
    hooks: options.hooks ?? [],
    subagents: { agents: { payer: { description: 'Pays', driver: payScript, tools: { pay } } } },
  });
}

/** A reconcile that looks the call up in the ledger by its idempotency key: the payment API's lookup. */
export function ledgerLookup(ledger: string): ToolReconcile<{ amount: number }> {
  return ({ input, idempotencyKey }) =>
    ledgerLines(ledger).some((line) => line.startsWith(`${idempotencyKey} `))
      ? { status: 'done', result: `paid ${input.amount}` }
      : { status: 'not-done' };
}
