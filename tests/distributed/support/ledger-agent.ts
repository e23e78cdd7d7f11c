import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { z } from 'zod';
import { abortableDelay } from '../../../src/drivers/abortable-delay';
import { type ScriptEntry, scriptedDriver } from '../../../src/drivers/scripted-driver';
import type { Agent } from '../../../src/runtime/agent-actor';
import { createAgent } from '../../../src/runtime/create-agent';
import { AgentState } from '../../../src/state/agent-state';
import { ExecutionBudget } from '../../../src/state/execution-budget';
import { defineTool, type ToolEffect } from '../../../src/tools/define-tool';

/** Tool steps of a ledger run; one more step answers. */
export const LEDGER_TOOL_STEPS = 4;
export const LEDGER_STEPS = LEDGER_TOOL_STEPS + 1;
export const LEDGER_ANSWER = `recorded ${LEDGER_TOOL_STEPS}`;
/** The state metadata key that names the session, so that tool call ids are unique per session. */
export const SESSION_TAG = 'test.session';

export interface LedgerAgentOptions {
  /** The file each tool call appends `<workerTag> <session> <toolCallId>` to. */
  readonly ledger: string;
  readonly workerTag: string;
  /** Delay of each model call (honours abort). */
  readonly modelDelayMs?: number;
  /** Delay of each tool call after it wrote its line (so a kill can land between the two). */
  readonly toolDelayMs?: number;
  /** The `record` tool's effect (default: `defineTool`'s, 'idempotent'). */
  readonly effect?: ToolEffect;
  /**
   * Calls that kill their process (SIGKILL, after the ledger line), by call id: the first N times
   * the ledger holds them (a worker that dies mid-step, N times).
   */
  readonly crashCalls?: Readonly<Record<string, number>>;
  /** This process SIGSTOPs itself as this step's model call answers (a pause: a long GC, a frozen VM). */
  readonly selfStopAtStep?: number;
  /**
   * `record` (then unsafe) reconciles: a call whose line is in the ledger is done, else not done.
   * Each answer is appended to `<ledger>.reconciles` (`<workerTag> <session> <toolCallId> <status>`).
   */
  readonly reconcile?: boolean;
}

/**
 * The agent of the distributed tests: steps 1-4 each call `record` (call id `<session>-call-<n>`),
 * which appends a line to the ledger file (so a test can count executions across processes);
 * step 5 answers.
 */
export function ledgerAgent(options: LedgerAgentOptions): Agent {
  const record = defineTool({
    description: 'Records that it ran',
    inputSchema: z.object({ session: z.string(), n: z.number() }),
    ...(options.effect && { effect: options.effect }),
    ...(options.reconcile && {
      effect: 'unsafe' as const,
      reconcile: ({ input, toolCallId }: { input: { session: string; n: number }; toolCallId: string }) => {
        const done = readLedger(options.ledger).some(
          (l) => l.session === input.session && l.callId === toolCallId,
        );
        appendFileSync(
          `${options.ledger}.reconciles`,
          `${options.workerTag} ${input.session} ${toolCallId} ${done ? 'done' : 'not-done'}\n`,
        );
        return done
          ? { status: 'done' as const, result: `recorded ${input.n}` }
          : { status: 'not-done' as const };
      },
    }),
    execute: async ({ n }, { toolCallId, signal, state }) => {
      appendFileSync(
        options.ledger,
        `${options.workerTag} ${String(state.metadata()[SESSION_TAG])} ${toolCallId}\n`,
      );
      const crashes = options.crashCalls?.[toolCallId];
      if (
        crashes !== undefined &&
        readLedger(options.ledger).filter((l) => l.callId === toolCallId).length <= crashes
      )
        process.kill(process.pid, 'SIGKILL');
      if (options.toolDelayMs) await abortableDelay(options.toolDelayMs, signal);
      return `recorded ${n}`;
    },
  });
  const usage = { inputTokens: 10, outputTokens: 2 };
  const script: ScriptEntry[] = Array.from({ length: LEDGER_STEPS }, (_, i) => (state: AgentState) => {
    const session = String(state.metadata()[SESSION_TAG] ?? 'untagged');
    const n = i + 1;
    if (n === options.selfStopAtStep) process.kill(process.pid, 'SIGSTOP');
    return n <= LEDGER_TOOL_STEPS
      ? {
          toolCalls: [{ name: 'record', args: { session, n }, id: `${session}-call-${n}` }],
          usage,
          delayMs: options.modelDelayMs,
        }
      : { text: LEDGER_ANSWER, usage, delayMs: options.modelDelayMs };
  });
  return createAgent({
    driver: scriptedDriver(script),
    tools: { record },
    budget: new ExecutionBudget({ maxSteps: LEDGER_STEPS + 2 }),
  });
}

/** The first state of a ledger session. */
export function ledgerState(sessionId: string): AgentState {
  return AgentState.empty().withMetadata(SESSION_TAG, sessionId).withUserMessage('Record four things');
}

export interface LedgerLine {
  readonly worker: string;
  readonly session: string;
  readonly callId: string;
}

export function readLedger(path: string): LedgerLine[] {
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line.length > 0)
    .map((line) => {
      const [worker = '', session = '', callId = ''] = line.split(' ');
      return { worker, session, callId };
    });
}
