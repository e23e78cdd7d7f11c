/**
 * The chart (`agentLoop`) provided for one agent: its workers (`hooks`, `driver`, `toolExecutor`,
 * `checkpoint`, a file each), the guard and actions only the runtime can carry out
 * (`startsUnsafeCalls`, `keepSettledToolCalls`, `spawnSubagent`), and its subagents' machines.
 */
import { assign } from 'xstate';
import { agentLoop, type StepCheck } from '../../machines/agentLoop';
import type { Driver } from '../drivers/driver';
import type { BudgetLedger } from '../ledger/budget-ledger';
import type { McpServers } from '../mcp/mcp-servers';
import type { SessionStore } from '../persistence/session-store';
import type { AgentState } from '../state/agent-state';
import type { HookStage } from '../state/hook-stage';
import type { ToolSet } from '../tools/define-tool';
import type { AgentDefinition } from './agent-definition';
import { signedBy } from './approval-signature';
import { checkpointWorker } from './checkpoint-worker';
import { driverWorker } from './driver-worker';
import { agentHooks } from './hooks-worker';
import { UnsafeCalls } from './intent-save';
import { NestedIntents } from './nested-intents';
import { SettledToolCalls } from './settled-tool-calls';
import type { SubagentCalls } from './subagent-calls';
import { registerSubagents, subagentSpawner } from './subagent-spawn';
import { toolExecutorWorker } from './tool-executor-worker';

export interface ProvidedLoop {
  /** The chart with this agent's actors provided. */
  readonly machine: typeof agentLoop;
  /** The hook stages the agent has hooks for (the others are passed without the hooks worker). */
  readonly hookStages: readonly HookStage[];
  /** The agent's built-in after-step guards, as the chart's step check (`LoopInput.checkStep`). */
  readonly checkStep: StepCheck;
}

export interface LoopParts {
  readonly driver: Driver;
  readonly tools: ToolSet;
  readonly store: SessionStore | undefined;
  readonly subagents: SubagentCalls;
  /** MCP servers whose tools join the agent's (they start at the first model call). */
  readonly mcp: McpServers | undefined;
  /** The root's `approvalSecret`: its pending approvals are signed (children's are signed by the root). */
  readonly approvalSecret?: string;
  /** The budget ledger the runs' model calls charge (the run's `ledgerScopes`). */
  readonly ledger?: BudgetLedger;
}

export function provideLoop(definition: AgentDefinition, parts: LoopParts): ProvidedLoop {
  const { driver, tools, store, subagents, mcp, approvalSecret, ledger } = parts;
  const hooks = agentHooks(definition);
  // An MCP server's tools are known once it runs: any of them may need approval.
  const needsApprovals =
    mcp !== undefined ||
    Object.values(tools).some((tool) => tool.needsApproval !== undefined && tool.needsApproval !== false);
  const unsafe = new UnsafeCalls(tools, mcp);
  /**
   * What the root saves: with an `approvalSecret`, every call a load may list (pending, or about to
   * start and so interrupted by a crash) signed, so the stored session lists them signed.
   */
  const sealed = (state: AgentState, sessionId: string) => signedBy(approvalSecret, state, sessionId);
  const nested = new NestedIntents(store, (state) => unsafe.starting(state, noSignal), sealed);
  const settled = new SettledToolCalls();
  const spawnChild = subagentSpawner(subagents, nested);
  const machine = agentLoop.provide({
    guards: {
      startsUnsafeCalls: ({ context }) => unsafe.mayStart(context.state),
    },
    actions: {
      // An agent without hooks has no hooks worker: nothing to start or stop (each costs a snapshot).
      ...(hooks.stages.length === 0 && { startHooksWorker: () => {}, stopHooksWorker: () => {} }),
      keepSettledToolCalls: assign({ state: ({ context, self }) => settled.keep(self, context.state) }),
      spawnSubagent: assign((args) => {
        spawnChild(args);
        return {};
      }),
    },
    actors: {
      hooks: hooks.worker,
      driver: driverWorker({ driver, tools, mcp, subagents, ledger, needsApprovals, approvalSecret }),
      checkpoint: checkpointWorker({ store, nested, unsafe, sealed }),
      toolExecutor: toolExecutorWorker({
        definition,
        tools,
        mcp,
        subagents,
        settled,
        // an unsafe call a crash interrupted waits for a decision too (a rejected one is blocked)
        takesDecisions: needsApprovals || unsafe.possible,
        approvalSecret,
      }),
    },
  });
  registerSubagents(machine, subagents);
  return { machine, hookStages: hooks.stages, checkStep: hooks.checkStep };
}

const noSignal = new AbortController().signal;
