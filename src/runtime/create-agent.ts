import {
  type Actor,
  type ActorOptions,
  assign,
  createActor,
  fromPromise,
  type InspectionEvent,
  type Observer,
} from 'xstate';
import { z } from 'zod';
import { agentLoop, type HooksInput, type StepInput } from '../../machines/agentLoop';
import type { Driver } from '../drivers/driver';
import { modelDriver } from '../drivers/model-driver';
import { budgetGuard } from '../hooks/budget-guards';
import { errorPolicy } from '../hooks/error-policy';
import { finishReasonGuard } from '../hooks/finish-reason-guard';
import type { Hook, StageName } from '../hooks/hook';
import { hooksFor, runStage } from '../hooks/hook-stack';
import { type ResponseSchema, structuredOutputGuard } from '../hooks/structured-output-guard';
import type { ResponseFormat } from '../state/agent-context';
import type { AgentState } from '../state/agent-state';
import { AgentMachineError } from '../state/errors';
import { ExecutionBudget } from '../state/execution-budget';
import type { ReportEvent } from '../state/loop-events';
import { executeTools } from '../tools/tool-executor';
import { type AgentDefinition, checkDefinition } from './agent-definition';

export type AgentActor = Actor<typeof agentLoop>;

export interface CreateActorOptions {
  /** An inspection observer: `@statelyai/inspect`'s `inspector.inspect`, or a function. */
  readonly inspect?: ActorOptions<typeof agentLoop>['inspect'];
  readonly id?: string;
  readonly systemId?: string;
}

export interface ExecuteOptions extends CreateActorOptions {
  /** Aborting ends the run promptly: Stopped with UserRequested, completed steps kept. */
  readonly signal?: AbortSignal;
}

/** An actor error the run could not record (a bug, or a hook returning something else). */
export class AgentRuntimeError extends AgentMachineError {
  constructor(
    message: string,
    readonly state: AgentState,
    options?: { cause?: unknown },
  ) {
    super('AGENT_RUNTIME', message, options);
  }
}

export interface Agent {
  readonly definition: AgentDefinition;
  readonly budget: ExecutionBudget;
  /** The loop machine with this agent's actors provided. */
  readonly machine: typeof agentLoop;
  /** Runs one execution of `state` and resolves with the final state. */
  execute(state: AgentState, options?: ExecuteOptions): Promise<AgentState>;
  /** The XState actor (not started): starts in `pending`; send `execute`, `user.message`, `stop`. */
  createActor(state: AgentState, options?: CreateActorOptions): AgentActor;
}

/**
 * Builds an agent from its definition: the loop machine with the driver, tool executor and hooks
 * provided as its actors.
 *
 * @example
 * const agent = createAgent({ model, tools: { add }, budget: new ExecutionBudget({ maxSteps: 10 }) });
 * const done = await agent.execute(AgentState.empty().withUserMessage('What is 2 + 3?'));
 * done.finalResponse(); // '5'
 */
export function createAgent(definition: AgentDefinition): Agent {
  checkDefinition(definition);
  const budget = definition.budget ?? ExecutionBudget.default();
  const driver: Driver = definition.driver ?? modelDriver(definition.model!, definition.modelOptions);
  const tools = definition.tools ?? {};
  const userHooks = definition.hooks ?? [];
  const stages: Record<StageName, Hook[]> = {
    beforeExecution: hooksFor(userHooks, 'beforeExecution'),
    beforeStep: hooksFor(userHooks, 'beforeStep'),
    afterStep: hooksFor(userHooks, 'afterStep'),
    afterExecution: hooksFor(userHooks, 'afterExecution'),
    onError: hooksFor(userHooks, 'onError'),
  };
  const hookStages = (Object.keys(stages) as StageName[]).filter((stage) => stages[stage].length > 0);
  // Built-in guards are synchronous: they run inside the machine's actions, at no actor's cost.
  const guards = {
    beforeStep: budget.isEmpty() ? [] : [budgetGuard(budget)],
    afterStep: [
      ...(definition.responseFormat ? [structuredOutputGuard(definition.responseFormat)] : []),
      ...(definition.finishReasons?.length ? [finishReasonGuard(definition.finishReasons)] : []),
      errorPolicy(definition.errorPolicy),
    ],
  };
  const noSignal = new AbortController().signal;
  const toolHooks = userHooks.filter((h) => h.beforeToolUse || h.afterToolUse);
  // Reports after the run ended (an aborted tool settling late) have no one to go to.
  const reporter = (self: StepInput['self']) => (event: ReportEvent) => {
    if (self.getSnapshot().status === 'active') self.send(event);
  };

  const machine = agentLoop.provide({
    actions: {
      applyGuards: assign({
        state: ({ context }, params: { stage: 'beforeStep' | 'afterStep' }) =>
          runStage(guards[params.stage], params.stage, context.state, { signal: noSignal }) as AgentState,
      }),
    },
    actors: {
      hooks: fromPromise<AgentState, HooksInput>(async ({ input, signal }) =>
        runStage(
          stages[input.stage],
          input.stage,
          input.state,
          input.error ? { signal, error: input.error } : { signal },
        ),
      ),
      driver: fromPromise<AgentState, StepInput>(async ({ input, signal }) =>
        driver.infer(input.state, { signal, tools, report: reporter(input.self) }),
      ),
      toolExecutor: fromPromise<AgentState, StepInput>(({ input, signal }) =>
        executeTools(input.state, {
          tools,
          hooks: toolHooks,
          signal,
          concurrency: definition.toolConcurrency,
          timeoutMs: definition.toolTimeoutMs,
          report: reporter(input.self),
        }),
      ),
    },
  });

  const responseFormat = definition.responseFormat && jsonResponseFormat(definition.responseFormat);
  const prepare = (state: AgentState) => {
    let prepared = state;
    if (definition.systemPrompt && prepared.systemPrompt() === '') {
      prepared = prepared.withSystemPrompt(definition.systemPrompt);
    }
    if (responseFormat && prepared.responseFormat().type === 'text')
      prepared = prepared.withResponseFormat(responseFormat);
    return prepared;
  };

  const agent: Agent = {
    definition,
    budget,
    machine,
    createActor(state, options = {}) {
      return createActor(machine, { input: { state: prepare(state), hookStages }, ...options });
    },
    execute(state, options = {}) {
      const { signal, ...actorOptions } = options;
      const actor = agent.createActor(state, actorOptions);
      return runToOutcome(actor, signal);
    },
  };
  return agent;
}

function jsonResponseFormat(schema: ResponseSchema): ResponseFormat {
  if (!(schema instanceof z.ZodType)) return { type: 'json' };
  return { type: 'json', schema: z.toJSONSchema(schema, { target: 'draft-7' }) as Record<string, unknown> };
}

const outcomes = ['completed', 'stopped', 'failed'] as const;

/** Starts the actor, sends `execute` and resolves with the state once it reaches an outcome. */
function runToOutcome(actor: AgentActor, signal: AbortSignal | undefined): Promise<AgentState> {
  return new Promise<AgentState>((resolve, reject) => {
    let settled = false;
    const onAbort = () => actor.send({ type: 'stop', reason: abortReason(signal) });
    const finish = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      signal?.removeEventListener('abort', onAbort);
      subscription.unsubscribe();
      outcome();
      actor.stop();
    };
    const observer: Observer<ReturnType<AgentActor['getSnapshot']>> = {
      next: (snapshot) => {
        if (outcomes.some((o) => snapshot.matches(o))) finish(() => resolve(snapshot.context.state));
      },
      error: (error) => {
        const state = actor.getSnapshot().context.state;
        finish(() =>
          reject(
            new AgentRuntimeError(`The agent actor failed: ${(error as Error)?.message}`, state, {
              cause: error,
            }),
          ),
        );
      },
    };
    const subscription = actor.subscribe(observer);
    actor.start();
    actor.send({ type: 'execute' });
    if (signal?.aborted) onAbort();
    else signal?.addEventListener('abort', onAbort, { once: true });
  });
}

function abortReason(signal: AbortSignal | undefined): string {
  const reason = signal?.reason;
  if (reason instanceof Error && reason.name !== 'AbortError') return reason.message;
  if (typeof reason === 'string' && reason) return reason;
  return 'Stopped by user request';
}

export type { InspectionEvent };
