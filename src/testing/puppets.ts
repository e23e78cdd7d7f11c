/**
 * The agent test model's puppets: the runtime's actors (model, tools, hooks, store, a subagent),
 * answering as the path says, and the behaviours the graph and the runs share.
 */
import { z } from 'zod';
import type { Driver } from '../drivers/driver';
import type { Hook } from '../hooks/hook';
import { InMemorySessionStore } from '../persistence/in-memory-session-store';
import type { SessionStore } from '../persistence/session-store';
import type { SubagentDefinition } from '../runtime/agent-definition';
import { AgentState } from '../state/agent-state';
import { AgentStep, InferenceResponse } from '../state/agent-step';
import { AgentStopError } from '../state/agent-stop-error';
import type { HookStage } from '../state/hook-stage';
import { stepEventIds } from '../state/loop-events';
import { Message } from '../state/message';
import { ToolExecution } from '../state/tool-execution';
import { Usage } from '../state/usage';
import { defineTool } from '../tools/define-tool';
import {
  PROBE_APPROVER,
  PROBE_GATE,
  PROBE_SUBAGENT,
  PROBE_TOOL,
  SUBAGENT_USAGE,
  USAGE,
} from './test-model-vocabulary';
export function hookBehaviour(state: AgentState, behaviour: string): AgentState {
  return behaviour === 'continue' ? state.withContinuationRequested() : state;
}

export function modelAnswer(state: AgentState, answer: string): AgentState {
  const n = state.stepCount() + 1;
  const call =
    answer === 'toolCall'
      ? { id: `probe-${state.executionCount()}-${n}`, name: PROBE_TOOL, args: { n } }
      : answer === 'subagent'
        ? { id: `helper-${state.executionCount()}-${n}`, name: PROBE_SUBAGENT, args: { task: `part ${n}` } }
        : answer === 'approvalCall'
          ? { id: `gate-${state.executionCount()}-${n}`, name: PROBE_GATE, args: { n } }
          : answer === 'nestedApproval'
            ? { id: `approver-${state.executionCount()}-${n}`, name: PROBE_APPROVER, args: { task: 'open' } }
            : null;
  const text = call ? '' : `answer ${n}`;
  const answered = state.withCurrentStep(
    AgentStep.of({
      inputMessages: state.messageList(),
      outputMessages: [Message.assistant(text, call ? [call] : [])],
      inferenceResponse: InferenceResponse.of({
        text,
        toolCalls: call ? [call] : [],
        finishReason: call ? 'tool-calls' : 'stop',
        usage: Usage.of(USAGE),
      }),
    }),
  );
  return call?.name === PROBE_GATE ? answered.withApprovalRequested([call.id], 0) : answered;
}

export function toolOutcome(state: AgentState, outcome: 'ok' | 'fail'): AgentState {
  const step = state.currentStep();
  if (!step) return state;
  const approver = step.requestedToolCalls().find((c) => c.name === PROBE_APPROVER);
  // the approver's child waits for a decision on its gate call; once decided, it answers
  if (approver && !state.approval()?.children[approver.id]) {
    const child = AgentState.empty({ agentId: PROBE_APPROVER }).withUserMessage('open');
    const at = state.execution()?.startedAtMs() ?? 0;
    return state.withSubagentsAwaiting({
      [approver.id]: modelAnswer(child.withExecutionStarted(at).withStepStarted(at), 'approvalCall'),
    });
  }
  const executions = step.requestedToolCalls().map((call) => {
    if (call.name === PROBE_APPROVER) return ToolExecution.succeeded(call, 'answer 2', 0, 0);
    if (call.name === PROBE_SUBAGENT)
      return ToolExecution.succeeded(call, 'helped', 0, 0).withUsage(Usage.of(SUBAGENT_USAGE));
    if (call.name === PROBE_GATE) {
      const decision = state.approval()?.decisions[call.id];
      return decision?.type === 'reject'
        ? ToolExecution.blocked(call, 'rejected', 0)
        : ToolExecution.succeeded(call, 'opened', 0, 0);
    }
    return outcome === 'ok'
      ? ToolExecution.succeeded(call, 'ok', 0, 0)
      : ToolExecution.failed(call, new Error('probe failed'), 0, 0);
  });
  // the decisions have been carried out, as the tool executor does
  return state.withCurrentStep(step.withToolExecutions(executions)).withApprovalCleared();
}

interface PuppetCall {
  readonly actor: 'driver' | 'tool' | 'hooks' | 'store';
  readonly state: AgentState;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
}

export class Puppet {
  private pending: PuppetCall[] = [];
  private waiter: (() => void) | null = null;

  call(actor: PuppetCall['actor'], state: AgentState, signal: AbortSignal): Promise<unknown> {
    return new Promise((resolve, reject) => {
      const entry: PuppetCall = { actor, state, resolve, reject };
      this.pending.push(entry);
      signal.addEventListener('abort', () => {
        this.pending = this.pending.filter((p) => p !== entry);
        reject(signal.reason);
      });
      this.waiter?.();
    });
  }

  take(actor: PuppetCall['actor']): PuppetCall | undefined {
    // the latest call: an earlier one of the same actor was left behind by a stop (a save in flight)
    const index = this.pending.findLastIndex((p) => p.actor === actor);
    return index < 0 ? undefined : this.pending.splice(index, 1)[0];
  }

  hasPending(): boolean {
    return this.pending.length > 0;
  }

  onCall(fn: (() => void) | null): void {
    this.waiter = fn;
  }
}

/**
 * A puppet that answers at once, each actor's calls in turn with the behaviours a path gave them:
 * a replay of the path's recorded run makes the hooks (and the probe tool's hook) decide again as
 * they did.
 */
export class AnsweringPuppet extends Puppet {
  constructor(private readonly answers: Record<PuppetCall['actor'], unknown[]>) {
    super();
  }

  /**
   * The next answer; past the path's answers, `pass`: the recorded run was still waiting for this
   * one (a hook, a tool's hook) where it ended, with its state as it was.
   */
  override call(actor: PuppetCall['actor']): Promise<unknown> {
    const queue = this.answers[actor];
    return Promise.resolve(queue.length > 0 ? queue.shift() : 'pass');
  }
}

export function puppetDriver(puppet: Puppet | null): Driver {
  return {
    name: 'puppet',
    infer: async (state, { signal, report }) => {
      if (!puppet) throw new Error('graph-only agent');
      const answer = (await puppet.call('driver', state, signal)) as string;
      if (answer === 'error') throw new Error('model unavailable');
      if (answer === 'stop') throw new AgentStopError('model stops');
      if (answer === 'final') {
        report({
          type: 'text.delta',
          ...stepEventIds(state),
          delta: `answer ${state.stepCount() + 1}`,
        });
      }
      // with history behind it, the model driver fits the prompt to its window and reports it
      if (answer === 'toolCall' && state.stepCount() > 0) {
        report({
          type: 'context.compacted',
          ...stepEventIds(state),
          strategy: 'tool-results',
          messagesRemoved: 1,
          tokensBefore: 2 * state.stepCount() * USAGE.inputTokens,
          tokensAfter: state.stepCount() * USAGE.inputTokens,
          forced: false,
        });
      }
      return modelAnswer(state, answer);
    },
  };
}

/** The probe tool; its outcome is the one the probe hooks took for the call (`outcomes`), or asked for now. */
export function probeTool(puppet: Puppet | null, outcomes: Map<string, unknown>) {
  return defineTool({
    description: 'A probe whose outcome the test decides',
    inputSchema: z.object({ n: z.number() }),
    execute: async (_input, { signal, state, toolCallId }) => {
      if (!puppet) throw new Error('graph-only agent');
      const decided = outcomes.get(toolCallId);
      outcomes.delete(toolCallId);
      const outcome = decided ?? (await puppet.call('tool', state, signal));
      if (outcome === 'fail') throw new Error('probe failed');
      if (outcome === 'stop') throw new AgentStopError('probe tool stops', {}, PROBE_TOOL);
      return 'ok';
    },
  });
}

export const gateTool = defineTool({
  description: 'A tool a person must approve',
  inputSchema: z.object({ n: z.number() }),
  needsApproval: true,
  execute: async () => 'opened',
});

/**
 * The state a path starts from: a task, or a step saved while awaiting approval of a gate call,
 * its own or (`'inSubagent'`) its approver subagent's, or (`afterFinalStep`) an execution saved
 * with its final answer recorded but not finalized.
 */
export function initialState(awaitingApproval: boolean | 'inSubagent', afterFinalStep = false): AgentState {
  const fresh = AgentState.empty({ agentId: 'model' }).withUserMessage('task');
  if (afterFinalStep)
    return modelAnswer(fresh.withExecutionStarted(0).withStepStarted(0), 'final').withCurrentStepRecorded(0);
  if (!awaitingApproval) return fresh;
  if (awaitingApproval === 'inSubagent') {
    // saved now: the wait is within the time budget, so decisions (not only the timeout) are explored
    const now = Date.now();
    return toolOutcome(
      modelAnswer(fresh.withExecutionStarted(now).withStepStarted(now), 'nestedApproval'),
      'ok',
    );
  }
  return modelAnswer(fresh.withExecutionStarted(0).withStepStarted(0), 'approvalCall');
}

export const probeSubagent: SubagentDefinition = {
  description: 'A helper that answers at once',
  driver: {
    name: 'helper',
    infer: (state) =>
      state.withCurrentStep(
        AgentStep.of({
          inputMessages: state.messageList(),
          outputMessages: [Message.assistant('helped')],
          inferenceResponse: InferenceResponse.of({
            text: 'helped',
            finishReason: 'stop',
            usage: Usage.of(SUBAGENT_USAGE),
          }),
        }),
      ),
  },
};

/** Calls the gate (which waits for a person's decision), then answers. */
export const probeApprover: SubagentDefinition = {
  description: 'A helper whose gate call needs approval',
  driver: {
    name: 'approver',
    infer: (state) => modelAnswer(state, state.stepCount() === 0 ? 'approvalCall' : 'final'),
  },
};

/**
 * An in-memory session store whose saves wait for the path to say whether they succeed. A
 * subagent's intent, saved while its caller's tools run, is not a state of the caller's chart: it
 * is saved without asking the path.
 */
export function puppetStore(puppet: Puppet | null): SessionStore {
  const store = new InMemorySessionStore();
  return {
    load: (id) => store.load(id),
    save: async (id, state, version) => {
      if (!puppet) throw new Error('graph-only agent');
      if (holdsSubagentIntent(state)) return store.save(id, state, version);
      const outcome = await puppet.call('store', state, new AbortController().signal);
      if (outcome === 'fail') throw new Error('probe store failed');
      return store.save(id, state, version);
    },
    delete: (id) => store.delete(id),
    list: () => store.list(),
    close: () => store.close(),
  };
}

/** Whether a subagent's intent (a child with calls about to start), at any depth, is in the state. */
function holdsSubagentIntent(state: AgentState): boolean {
  return Object.values(state.approval()?.children ?? {}).some(
    (child) => child.approval()?.started !== undefined || holdsSubagentIntent(child),
  );
}

/** The probe hooks, at every stage or (`stages`) at those only. */
export function puppetHooks(
  puppet: Puppet | null,
  outcomes: Map<string, unknown>,
  stages?: readonly HookStage[],
): Hook {
  const stage =
    (name: HookStage) =>
    async (state: AgentState, { signal }: { signal: AbortSignal }) => {
      if (!puppet) throw new Error('graph-only agent');
      const behaviour = await puppet.call('hooks', state, signal);
      if (behaviour === 'throw') throw new Error('probe hook failed');
      if (behaviour === 'stop') throw new AgentStopError(`probe hook stops (${name})`);
      return hookBehaviour(state, behaviour as string);
    };
  if (stages) return Object.fromEntries([['name', 'probeHooks'], ...stages.map((s) => [s, stage(s)])]);
  return {
    name: 'probeHooks',
    // The probe call's outcome is taken here, before the call: 'crash' makes this hook throw, and
    // a beforeToolUse hook that throws fails the tool executor (an afterToolUse one fails its call).
    beforeToolUse: async (state, { toolCall, signal }) => {
      if (toolCall.name !== PROBE_TOOL) return undefined;
      if (!puppet) throw new Error('graph-only agent');
      const outcome = await puppet.call('tool', state, signal);
      if (outcome === 'crash') throw new Error('probe tool hook failed');
      outcomes.set(toolCall.id, outcome);
      return undefined;
    },
    beforeExecution: stage('beforeExecution'),
    beforeStep: stage('beforeStep'),
    afterStep: stage('afterStep'),
    afterExecution: stage('afterExecution'),
    onError: stage('onError'),
  };
}
