import type { AnyActorRef } from 'xstate';
import type { AgentState } from '../state/agent-state';
import type { AgentStep } from '../state/agent-step';
import type { ToolExecution } from '../state/tool-execution';

/**
 * The tool calls of each agent's step in flight that have settled, so a `stop` in the middle of a
 * parallel tool step keeps their results: only the calls still running are recorded as aborted.
 * The tool executor's answer for the whole step is dropped on a stop; these are what it had. A
 * tool hook that throws (the run fails) leaves them here too, for the chart to keep.
 */
export class SettledToolCalls {
  private readonly byAgent = new WeakMap<AnyActorRef, { step: AgentStep; executions: ToolExecution[] }>();

  /** Starts collecting for `step` of `agent`; the callback is the tool executor's `onSettled`. */
  collect(agent: AnyActorRef, step: AgentStep | null): (index: number, execution: ToolExecution) => void {
    if (step === null) return () => {};
    const entry = { step, executions: [] as ToolExecution[] };
    this.byAgent.set(agent, entry);
    return (index, execution) => {
      entry.executions[index] = execution;
    };
  }

  /** Forgets `agent`'s step once its tool executor answered (the answer holds every result). */
  release(agent: AnyActorRef, step: AgentStep | null): void {
    if (this.byAgent.get(agent)?.step === step) this.byAgent.delete(agent);
  }

  /** `state` with the settled calls of its step in flight recorded, in the model's order. */
  keep(agent: AnyActorRef, state: AgentState): AgentState {
    const step = state.currentStep();
    const entry = this.byAgent.get(agent);
    if (!step || !entry || entry.step !== step) return state;
    this.byAgent.delete(agent);
    const recorded = new Set(step.toolExecutions().map((e) => e.toolCallId()));
    const settled = entry.executions.filter((e) => e !== undefined && !recorded.has(e.toolCallId()));
    if (settled.length === 0) return state;
    return state.withCurrentStep(step.withToolExecutions([...step.toolExecutions(), ...settled]));
  }
}
