import type { AgentState } from '../state/agent-state';
import type { AgentStep } from '../state/agent-step';
import { firstDifference, type JsonDifference } from '../state/json-difference';
import type { StepExecution } from '../state/step-execution';
import type { ReplayDivergence } from './replay-tracks';

/**
 * The first place where a replayed run differs from its recording, step by step (the request the
 * replay stopped at, then each step's tool results, then the rest of it), then the outcome (step
 * count, status, stop reason, usage, the conversation); null when they are equal but for the ids
 * and timestamps a run draws fresh. With `upTo`, only the steps before it are compared (a fork).
 */
export function firstDivergence(
  recorded: AgentState,
  replayed: AgentState,
  requests: RequestDivergences,
  upTo: number | null = null,
): ReplayDivergence | null {
  const requestDivergence = requests(recorded);
  const a = recorded.stepExecutions();
  const b = replayed.stepExecutions();
  const shared = Math.min(a.length, b.length, upTo === null ? Number.POSITIVE_INFINITY : upTo - 1);
  for (let i = 0; i < shared; i++) {
    const stepNumber = i + 1;
    if (requestDivergence?.stepNumber === stepNumber) return requestDivergence;
    const found = stepDivergence(stepNumber, a[i] as StepExecution, b[i] as StepExecution, requests);
    if (found) return found;
  }
  if (requestDivergence) return requestDivergence;
  if (upTo !== null)
    return b.length < Math.min(a.length, upTo - 1)
      ? {
          stepNumber: b.length + 1,
          kind: 'outcome',
          path: 'stepCount',
          recorded: a.length,
          replayed: b.length,
        }
      : null;
  const outcome = (path: string, r: unknown, p: unknown): ReplayDivergence => ({
    stepNumber: Math.max(1, Math.min(a.length, b.length + 1)),
    kind: 'outcome',
    path,
    recorded: r,
    replayed: p,
  });
  if (a.length !== b.length) return outcome('stepCount', a.length, b.length);
  if (recorded.status() !== replayed.status()) return outcome('status', recorded.status(), replayed.status());
  if (recorded.stopReason() !== replayed.stopReason())
    return outcome('stopReason', recorded.stopReason(), replayed.stopReason());
  const usage = firstDifference(recorded.usage(), replayed.usage(), 'usage');
  if (usage) return outcome(usage.path, usage.recorded, usage.replayed);
  const rest = firstDifference(outcomeOf(recorded), outcomeOf(replayed));
  return rest && outcome(rest.path, rest.recorded, rest.replayed);
}

/** The request each recorded agent's replay stopped at (the root's, a subagent's). */
export type RequestDivergences = (recorded: AgentState) => ReplayDivergence | null;

function stepDivergence(
  stepNumber: number,
  a: StepExecution,
  b: StepExecution,
  requests: RequestDivergences,
): ReplayDivergence | null {
  const at = (kind: ReplayDivergence['kind'], d: JsonDifference | null) => d && { stepNumber, kind, ...d };
  const sa = a.step();
  const sb = b.step();
  return (
    childDivergence(stepNumber, sa, sb, requests) ??
    at('tool-result', firstDifference(toolResults(sa), toolResults(sb), 'toolExecutions')) ??
    at('outcome', firstDifference(stepOutput(sa), stepOutput(sb))) ??
    at('outcome', firstDifference(a.continuation().toJSON(), b.continuation().toJSON(), 'continuation'))
  );
}

/** Where a subagent's replay first differs from its recording, as a path through the caller's step. */
function childDivergence(
  stepNumber: number,
  a: AgentStep,
  b: AgentStep,
  requests: RequestDivergences,
): ReplayDivergence | null {
  const replayed = b.toolExecutions();
  for (const [j, execution] of a.toolExecutions().entries()) {
    const recordedChild = execution.childState();
    const replayedChild = replayed[j]?.childState();
    if (!recordedChild || !replayedChild || replayed[j]?.toolCallId() !== execution.toolCallId()) continue;
    const found = firstDivergence(recordedChild, replayedChild, requests);
    if (!found) continue;
    const inStep = STATE_PATH.test(found.path)
      ? found.path
      : `execution.stepExecutions[${found.stepNumber - 1}].step.${found.path}`;
    return { ...found, stepNumber, path: `toolExecutions[${j}].childState.${inStep}` };
  }
  return null;
}

/** The paths of an outcome that are the state's own, not a step's. */
const STATE_PATH = /^(stepCount|status|stopReason|usage|context|llmConfig|executionCount|execution)\b/;

const toolResults = (step: AgentStep) => step.toolExecutions().map((e) => JSON.parse(JSON.stringify(e)));

/**
 * A step's JSON without its input (compared when it was asked), its tool executions (compared
 * first) and its id (a failed model call's step is given a fresh one).
 */
function stepOutput(step: AgentStep) {
  return {
    outputMessages: step.outputMessages(),
    inferenceResponse: step.inferenceResponse(),
    errors: step.stepErrors(),
    structuredOutput: step.structuredOutput(),
    request: step.request(),
  };
}

/**
 * What a run leaves besides its steps: the conversation and metadata, the execution's own errors
 * and signals, as JSON (only these parts written: the steps, compared above, are most of a state).
 */
function outcomeOf(state: AgentState) {
  const execution = state.execution();
  return JSON.parse(
    JSON.stringify({
      context: state.context(),
      llmConfig: state.llmConfig(),
      executionCount: state.executionCount(),
      execution: execution && {
        status: execution.status(),
        continuation: execution.continuation(),
        errors: execution.errors(),
      },
    }),
  ) as unknown;
}
