import { createActor } from 'xstate';
import { z } from 'zod';
import type { Driver } from '../drivers/driver';
import { modelDriver } from '../drivers/model-driver';
import type { ResponseSchema } from '../hooks/structured-output-guard';
import { NoSessionStoreError, SessionNotFoundError } from '../persistence/errors';
import type { ResponseFormat } from '../state/agent-context';
import { AgentState } from '../state/agent-state';
import type { ApprovalDecision } from '../state/approval';
import { ExecutionBudget } from '../state/execution-budget';
import { DEFAULT_MAX_DEPTH } from '../subagents/subagent-definition';
import type { Agent } from './agent-actor';
import { type AgentDefinition, checkDefinition } from './agent-definition';
import { checkSignature } from './approval-signature';
import { approvalPending, checkDecision, checkEdit } from './approvals';
import { provideLoop } from './loop-actors';
import { type InternalActorOptions, listened, runToOutcome } from './run-to-outcome';
import { type Scope, subagentCalls } from './subagent-calls';

export type { Agent, AgentActor, CreateActorOptions, ExecuteOptions } from './agent-actor';
export type { ApprovalInput } from './approvals';
export { AgentRuntimeError } from './run-to-outcome';

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
  return buildAgent(definition, { depth: 0, maxDepth: definition.subagents?.maxDepth ?? DEFAULT_MAX_DEPTH });
}

function buildAgent(definition: AgentDefinition, scope: Scope): Agent {
  const budget = definition.budget ?? ExecutionBudget.default();
  const store = definition.store;
  const driver: Driver =
    definition.driver ??
    (definition.model
      ? modelDriver(definition.model, { ...definition.modelOptions, ...contextOf(definition) })
      : (scope.driver as Driver));
  const tools = definition.tools ?? scope.tools ?? {};
  const subagents = subagentCalls(definition, scope, { driver, tools }, buildAgent);
  const approvalSecret = scope.depth === 0 ? definition.approvalSecret : undefined;
  const { machine, hookStages } = provideLoop(definition, {
    driver,
    tools,
    store,
    subagents,
    approvalSecret,
  });

  const responseFormat = definition.responseFormat && jsonResponseFormat(definition.responseFormat);
  const prepare = (state: AgentState) => {
    let prepared = state;
    if (definition.systemPrompt && prepared.systemPrompt() === '') {
      prepared = prepared.withSystemPrompt(definition.systemPrompt);
    }
    if (responseFormat && prepared.responseFormat().type === 'text') {
      prepared = prepared.withResponseFormat(responseFormat);
    }
    return prepared;
  };

  const agent: Agent = {
    definition,
    budget,
    machine,
    depth: scope.depth,
    toolsAt: (path) => {
      const [name, ...rest] = path;
      if (name === undefined) return tools;
      // a path through no subagent of this agent (a state from elsewhere) leads to no tools
      return subagents.has(name) ? subagents.childAgent(name).toolsAt(rest) : {};
    },
    inputFor: (state, runBudget, session) => ({
      state: prepare(state),
      hookStages,
      budget: runBudget ?? budget,
      session: session ?? null,
    }),
    createActor(state, options = {}) {
      const { budget: runBudget, session, reports, ...actorOptions } = options as InternalActorOptions;
      if (session && !store) throw new NoSessionStoreError('A session');
      const input = { ...agent.inputFor(state, runBudget, session), reports: reports ?? true };
      return createActor(machine, { input, ...actorOptions });
    },
    async execute(state, options = {}) {
      if (state.approval()) throw approvalPending(state);
      const { signal, sessionId, onEvent, ...actorOptions } = options;
      if (sessionId === undefined)
        return runToOutcome(agent.createActor(state, listened(actorOptions, onEvent)), signal, onEvent);
      if (!store) throw new NoSessionStoreError('execute(state, { sessionId })');
      const stored = await store.load(sessionId);
      // The started execution is saved first, so a crash in the first step can be resumed.
      const started = prepare(state).withExecutionStarted();
      const version = await store.save(sessionId, started, stored?.version ?? null);
      return runToOutcome(
        agent.createActor(started, {
          ...listened(actorOptions, onEvent),
          session: { id: sessionId, version },
        }),
        signal,
        onEvent,
      );
    },
    async decide(target, decisions, options = {}) {
      const { signal, onEvent, ...actorOptions } = options;
      let stored: { state: AgentState; version: number } | null = null;
      if (typeof target === 'string') {
        if (!store) throw new NoSessionStoreError('decide(sessionId, ...)');
        stored = await store.load(target);
        if (!stored) throw new SessionNotFoundError(target);
      }
      let state = stored?.state ?? (target as AgentState);
      const sessionId = typeof target === 'string' ? target : null;
      decisions.forEach(checkDecision);
      for (const decision of decisions) {
        if (approvalSecret) checkSignature(state, decision, approvalSecret, sessionId);
        await checkEdit(state, decision, agent.toolsAt);
        const { toolCallId, path, signature: _signature, ...rest } = decision;
        state = state.withApprovalDecision(toolCallId, rest as ApprovalDecision, path);
      }
      const session =
        typeof target === 'string' ? { id: target, version: stored?.version ?? null } : undefined;
      return runToOutcome(
        agent.createActor(state, { ...listened(actorOptions, onEvent), session }),
        signal,
        onEvent,
      );
    },
    async chat(sessionId, text, options = {}) {
      if (!store) throw new NoSessionStoreError('chat(sessionId, text)');
      const stored = await store.load(sessionId);
      const state = stored?.state ?? AgentState.empty();
      if (state.approval()) throw approvalPending(state);
      return agent.execute(state.withUserMessage(text), { ...options, sessionId });
    },
    async resume(sessionId, options = {}) {
      if (!store) throw new NoSessionStoreError('resume(sessionId)');
      const stored = await store.load(sessionId);
      if (!stored) throw new SessionNotFoundError(sessionId);
      const status = stored.state.status();
      if (status !== 'in_progress' && status !== 'pending') return stored.state;
      const { signal, onEvent, ...actorOptions } = options;
      const session = { id: sessionId, version: stored.version };
      return runToOutcome(
        agent.createActor(stored.state, { ...listened(actorOptions, onEvent), session }),
        signal,
        onEvent,
      );
    },
  };
  return agent;
}

const contextOf = (definition: AgentDefinition) =>
  definition.context ? { context: definition.context } : {};

function jsonResponseFormat(schema: ResponseSchema): ResponseFormat {
  if (!(schema instanceof z.ZodType)) return { type: 'json' };
  return { type: 'json', schema: z.toJSONSchema(schema, { target: 'draft-7' }) as Record<string, unknown> };
}
