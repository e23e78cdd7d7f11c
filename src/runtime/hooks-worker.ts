/**
 * An agent's hooks as the chart runs them: the `hooks` worker, which runs the hooks of one stage per
 * request, and the built-in after-step guards, which run synchronously as the chart's step check.
 */
import type { HooksRequest, StepCheck } from '../../machines/agentLoop';
import { errorPolicy } from '../hooks/error-policy';
import { finishReasonGuard } from '../hooks/finish-reason-guard';
import type { Hook } from '../hooks/hook';
import { hooksFor, runStage } from '../hooks/hook-stack';
import { structuredOutputGuard } from '../hooks/structured-output-guard';
import type { AgentState } from '../state/agent-state';
import type { HookStage } from '../state/hook-stage';
import type { AgentDefinition } from './agent-definition';
import { stepWorker } from './step-worker';

export interface AgentHooks {
  /** The stages the agent has hooks for (the others are passed without the hooks worker). */
  readonly stages: readonly HookStage[];
  /** The `hooks` worker: runs the stage a request names. */
  readonly worker: ReturnType<typeof stepWorker<HooksRequest>>;
  /** The agent's built-in after-step guards, as the chart's step check (`LoopInput.checkStep`). */
  readonly checkStep: StepCheck;
}

export function agentHooks(definition: AgentDefinition): AgentHooks {
  const userHooks = definition.hooks ?? [];
  const byStage: Record<HookStage, Hook[]> = {
    beforeExecution: hooksFor(userHooks, 'beforeExecution'),
    beforeStep: hooksFor(userHooks, 'beforeStep'),
    afterStep: hooksFor(userHooks, 'afterStep'),
    afterExecution: hooksFor(userHooks, 'afterExecution'),
    onError: hooksFor(userHooks, 'onError'),
  };
  const stages = (Object.keys(byStage) as HookStage[]).filter((stage) => byStage[stage].length > 0);
  // Built-in guards are synchronous: they run inside the machine's actions, at no actor's cost.
  const afterStepGuards = [
    ...(definition.responseFormat ? [structuredOutputGuard(definition.responseFormat)] : []),
    ...(definition.finishReasons?.length ? [finishReasonGuard(definition.finishReasons)] : []),
    errorPolicy(definition.errorPolicy),
  ];
  // The signal is a getter: a request's AbortController is made only if a hook reads it.
  const worker = stepWorker<HooksRequest>('hooks', ({ stage, state, error }, _worker, request) =>
    runStage(byStage[stage], stage, state, {
      get signal() {
        return request.signal;
      },
      ...(error && { error }),
    }),
  );
  // the chart runs them in the action that records the step
  const checkStep = (state: AgentState) =>
    runStage(afterStepGuards, 'afterStep', state, { signal: noSignal }) as AgentState;
  return { stages, worker, checkStep };
}

const noSignal = new AbortController().signal;
