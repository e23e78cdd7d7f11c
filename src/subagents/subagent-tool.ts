import { z } from 'zod';
import { AgentState } from '../state/agent-state';
import type { ExecutionBudget } from '../state/execution-budget';
import { Usage } from '../state/usage';
import type { Tool } from '../tools/define-tool';
import { siblingShare } from './sibling-share';
import { SubagentDepthExceededError } from './subagent-definition';

/** What the model passes to a subagent tool. */
export const subagentInputSchema = z.object({
  task: z
    .string()
    .min(1)
    .describe('What the subagent should do, self-contained: it does not see this conversation'),
  context: z.string().optional().describe('Facts the subagent needs for the task'),
});

export interface SubagentRunner {
  readonly name: string;
  readonly description: string;
  /** Depth the child would run at (the root is 0). */
  readonly depth: number;
  readonly maxDepth: number;
  /** The budget the caller runs on, read when the call starts. */
  readonly callerBudget: () => ExecutionBudget;
  readonly childBudget: ExecutionBudget;
  /** Every subagent the caller has: parallel calls to any of them share the remainder. */
  readonly subagentNames: ReadonlySet<string>;
  readonly run: (
    state: AgentState,
    options: { signal: AbortSignal; budget: ExecutionBudget; toolCallId: string },
  ) => Promise<AgentState>;
}

/**
 * The tool the model sees for one subagent: `{ task, context? }` in, the child's final answer out.
 * The child starts from a fresh state (its own system prompt, the task as the user message), with
 * `parentAgentId` set, on its budget capped by what the caller has left. The subagent calls of one
 * step share that remainder (`siblingShare`), so parallel children cannot together spend more than
 * it. The tool returns the child's final AgentState; the tool executor turns it into the call's
 * result (`ToolExecution.ofChild`). A child that waits for decisions returns its waiting state,
 * which the caller's step keeps; called again once they are taken, the tool resumes that child
 * instead of starting a fresh one. So does a call run again after a crash, when its child had saved
 * an intent (through its caller, `IntentSave`).
 */
export function subagentTool(runner: SubagentRunner): Tool<z.output<typeof subagentInputSchema>, AgentState> {
  return {
    description: runner.description,
    inputSchema: subagentInputSchema,
    // Run again after a crash: its child resumes from the intent it last saved in its caller's
    // session (its unsafe calls that had started wait as interrupted), or, having saved none (none
    // of them had started), starts again from its task. The calls inside keep their own effects.
    effect: 'idempotent',
    execute: async ({ task, context }, { signal, state, toolCallId }) => {
      if (runner.depth > runner.maxDepth)
        throw new SubagentDepthExceededError(runner.name, runner.depth, runner.maxDepth);
      const usage = state.usage();
      const startedAt = state.execution()?.startedAtMs() ?? Date.now();
      const step = state.currentStep();
      const sibling = (step?.requestedToolCalls() ?? []).filter((c) => runner.subagentNames.has(c.name));
      const left = runner.callerBudget().remaining({
        stepsUsed: state.stepCount(),
        tokensUsed: usage.totalTokens,
        costUsed: usage.cost,
        secondsUsed: (Date.now() - startedAt) / 1000,
      });
      const index = Math.max(
        0,
        sibling.findIndex((c) => c.id === toolCallId),
      );
      const share = siblingShare(
        runner.name,
        left,
        Math.max(1, sibling.length),
        index,
        step?.inferenceResponse().usage ?? Usage.zero,
      );
      // a child that waited for decisions (kept in the caller's waiting step) resumes where it waited
      const child =
        state.approval()?.children[toolCallId] ??
        AgentState.empty({ parentAgentId: state.agentId() }).withUserMessage(
          context ? `${task}\n\nContext:\n${context}` : task,
        );
      return runner.run(child, { signal, toolCallId, budget: runner.childBudget.cappedBy(share) });
    },
  };
}
