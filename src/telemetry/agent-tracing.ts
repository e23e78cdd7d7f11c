import type { Actor } from 'xstate';
import type { agentLoop } from '../../machines/agentLoop';
import type { Driver, DriverContext } from '../drivers/driver';
import { LedgerLimitError } from '../ledger/ledger-limit-error';
import type { AgentError } from '../state/agent-error';
import type { AgentEvent, ReportEvent, ToolReconciledEvent } from '../state/loop-events';
import { genAiMessages } from './gen-ai-messages';
import { modelAttributes, type TracedModel } from './model-attributes';
import { loadOpenTelemetryApi, type OpenTelemetryApi } from './open-telemetry-api';
import type { TelemetryOptions, TelemetrySpan, TelemetrySpanLink } from './telemetry-options';

// OpenTelemetry's SpanKind and SpanStatusCode values (numbers in the API; not imported, see telemetry-options).
const INTERNAL = 0;
const CLIENT = 2;
const ERROR = 2;
/** How many runs that ended waiting for approval are remembered, for the runs their decisions start. */
const AWAITED_KEPT = 1000;

/** The spans of one agent actor: its execution's `invoke_agent` and its open `execute_tool` spans. */
interface RunSpans {
  readonly name: string;
  /** The caller's execute_tool span, for a subagent; else the context active when the run starts is the parent. */
  readonly parentSpan: (at?: number) => TelemetrySpan | undefined;
  readonly sessionId: () => string | undefined;
  agent: TelemetrySpan | null;
  /** The agent and execution of the run's span. */
  ids: { agentId: string; executionId: string };
  /** This actor's run waits for approval: its span has ended, and the run that goes on links to it. */
  waiting: TelemetrySpanLink | null;
  context: unknown;
  error: AgentError | null;
  readonly tools: Map<string, TelemetrySpan>;
}

/** Who an actor's run is: its agent's name, and (for a subagent) the tool call that started it. */
export interface FollowedRun {
  readonly name: string;
  readonly caller?: { readonly actor: object; readonly toolCallId: string };
}

/**
 * OpenTelemetry spans for the runs of one tree of agents, made from the loop's own events (the
 * events `onEvent` gets) by the GenAI semantic conventions: `invoke_agent <name>` per execution,
 * `execute_tool <tool>` per tool call, and `chat <model>` per model call (from the driver, which
 * knows the call's start and end). Parents are set explicitly, so the tree holds without a global
 * context manager: a subagent's `invoke_agent` is a child of its caller's `execute_tool`; a root
 * run is a child of the context active when it starts, so a run started inside a caller's span
 * joins it. A run that rests waiting for approval ends its span; the run that goes on after the
 * decisions (in this actor, or in the new one `agent.decide` makes) starts a new span, linked to
 * it. `@opentelemetry/api` is loaded on first use (`ready`).
 */
export class AgentTracing {
  /** Resolves once `@opentelemetry/api` is loaded; rejects with TelemetryDependencyMissingError. */
  readonly ready: Promise<void>;
  private api: OpenTelemetryApi | null = null;
  private readonly runs = new WeakMap<object, RunSpans>();
  /** Runs whose span ended waiting for approval, by agent and execution id: `decide` runs them in a new actor. */
  private readonly awaited = new Map<string, TelemetrySpanLink>();

  constructor(private readonly options: TelemetryOptions) {
    this.ready = loadOpenTelemetryApi().then((api) => {
      this.api = api;
    });
    // The rejection is reported by every run, which awaits `ready` before it starts.
    this.ready.catch(() => undefined);
  }

  /** Traces the executions of `actor` (an agent actor, root or subagent) from its events. */
  follow(actor: Actor<typeof agentLoop>, run: FollowedRun): void {
    const { caller } = run;
    const spans: RunSpans = {
      name: run.name,
      // read when the run starts: by then the caller's execute_tool span exists, even if its events waited
      parentSpan: (at) => caller && this.callerToolSpan(caller, run.name, at),
      sessionId: () => actor.getSnapshot().context.session?.id,
      agent: null,
      ids: { agentId: '', executionId: '' },
      waiting: null,
      context: undefined,
      error: null,
      tools: new Map(),
    };
    this.runs.set(actor, spans);
    // Events before the API is loaded (an actor made with createActor at once) wait for it, with their times.
    let waiting: Array<[AgentEvent, number]> | null = null;
    actor.on('*', (event: AgentEvent) => {
      if (this.api && !waiting) return this.record(spans, event);
      if (!waiting) {
        const queue: Array<[AgentEvent, number]> = [];
        waiting = queue;
        this.ready.then(
          () => {
            for (const [queued, at] of queue) this.record(spans, queued, at);
            waiting = null;
          },
          // No run awaited the load (the actor was made with createActor): say why it is not traced.
          (error: Error) => process.emitWarning(error),
        );
      }
      waiting.push([event, Date.now()]);
    });
    // An actor stopped mid-run (waiting for approval, or stopped by its owner) closes what it left open.
    actor.subscribe({ complete: () => this.closeRun(spans), error: () => this.closeRun(spans) });
  }

  /**
   * The driver with a `chat` span around each model call, a child of its run's `invoke_agent` span.
   * `models`: the model the driver asks first, then those that may answer instead (fallbacks).
   */
  traceDriver(driver: Driver, models: readonly TracedModel[] | string | undefined): Driver {
    // a model id alone (as before the models were passed) names the model, not its provider or server
    const known = typeof models === 'string' ? [] : (models ?? []);
    const [requested] = known;
    const requestModel = typeof models === 'string' ? models : requested?.modelId;
    return {
      name: driver.name,
      infer: async (state, context) => {
        // a run whose first events wait for the API: its invoke_agent span is made once it is loaded
        if (!this.api) await this.ready;
        const run = context.run ? this.runs.get(context.run) : undefined;
        const agent = run && this.api && this.agentSpan(run);
        if (!run || !agent || !this.api) return driver.infer(state, context);
        const span = this.options.tracer.startSpan(
          requestModel ? `chat ${requestModel}` : 'chat',
          {
            kind: CLIENT,
            attributes: Object.assign(
              { 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': requestModel },
              requested && modelAttributes(requested),
            ),
          },
          this.api.trace.setSpan(run.context, agent),
        );
        try {
          const answered = await driver.infer(
            state,
            context.ledger ? withLedgerAttributes(context, span) : context,
          );
          const step = answered.currentStep();
          if (step) {
            const usage = step.inferenceResponse().usage;
            const answeredBy = step.model() !== requestModel && known.find((m) => m.modelId === step.model());
            if (answeredBy) span.setAttributes(modelAttributes(answeredBy));
            span.setAttributes({
              'gen_ai.response.model': step.model() ?? requestModel,
              'gen_ai.usage.input_tokens': usage.inputTokens,
              'gen_ai.usage.output_tokens': usage.outputTokens,
              'gen_ai.response.finish_reasons': step.finishReason() ? [step.finishReason() as string] : [],
            });
            if (this.options.recordContent) {
              span.setAttributes({
                'gen_ai.system_instructions': state.systemPrompt()
                  ? JSON.stringify([{ type: 'text', content: state.systemPrompt() }])
                  : undefined,
                'gen_ai.input.messages': genAiMessages(step.inputMessages()),
                'gen_ai.output.messages': genAiMessages(step.outputMessages(), step.finishReason()),
              });
            }
          }
          return answered;
        } catch (error) {
          if (LedgerLimitError.isInstance(error))
            span.setAttribute('agent_machine.ledger.refused_scope', error.limit.scope);
          failed(span, error as Error, this.options.recordContent);
          throw error;
        } finally {
          span.end();
        }
      },
    };
  }

  /**
   * A `reconcile_tool <tool>` span for a call a crash interrupted that its tool's reconcile was
   * asked about (before the run that goes on starts): `agent_machine.reconcile.status` says what it
   * answered (`'done'`, `'not-done'`, `'unknown'`); a reconcile that failed sets the span's error.
   */
  reconciled(event: ToolReconciledEvent): void {
    const api = this.api;
    if (!api) return;
    const span = this.options.tracer.startSpan(
      `reconcile_tool ${event.toolName}`,
      {
        kind: INTERNAL,
        attributes: {
          'gen_ai.operation.name': 'execute_tool',
          'gen_ai.tool.name': event.toolName,
          'gen_ai.tool.call.id': event.toolCallId,
          'gen_ai.agent.id': event.agentId,
          'agent_machine.execution_id': event.executionId,
          'agent_machine.reconcile.status': event.status,
        },
      },
      api.context.active(),
    );
    if (event.error) failed(span, event.error, this.options.recordContent);
    span.end();
  }

  private record(run: RunSpans, event: AgentEvent, at?: number): void {
    const api = this.api as OpenTelemetryApi;
    switch (event.type) {
      case 'execution.started': {
        this.closeRun(run, at);
        const active = api.context.active();
        const parent = run.parentSpan(at);
        run.context = parent ? api.trace.setSpan(active, parent) : active;
        run.error = null;
        const key = awaitedKey(event);
        run.waiting = this.awaited.get(key) ?? null;
        this.awaited.delete(key);
        this.startAgentSpan(run, event.agentId, event.executionId, at);
        return;
      }
      case 'tool.started':
        this.startToolSpan(run, event.toolCallId, event.toolName, event.args, at);
        return;
      case 'tool.finished': {
        const span = run.tools.get(event.toolCallId);
        if (!span) return;
        run.tools.delete(event.toolCallId);
        if (event.error) failed(span, event.error, this.options.recordContent);
        span.end(at);
        return;
      }
      case 'error':
        run.error = event.error;
        return;
      case 'approval.requested': {
        // The run rests (for minutes or days): its span ends now, and the run a decision starts links to it.
        const span = run.agent;
        // a decided run re-enters the wait with every call decided, and goes on at once
        if (!span || event.toolCalls.length === 0) return;
        span.setAttributes({
          'agent_machine.awaiting_approval': true,
          'agent_machine.status': 'awaiting_approval',
        });
        run.waiting = {
          context: span.spanContext(),
          attributes: { 'agent_machine.link': 'awaited_approval' },
        };
        this.awaited.set(awaitedKey(event), run.waiting);
        if (this.awaited.size > AWAITED_KEPT) this.awaited.delete(this.awaited.keys().next().value as string);
        this.closeRun(run, at);
        return;
      }
      case 'execution.finished': {
        const span = this.agentSpan(run, at);
        if (!span) return;
        span.setAttributes({
          'gen_ai.usage.input_tokens': event.usage.inputTokens,
          'gen_ai.usage.output_tokens': event.usage.outputTokens,
          'agent_machine.status': event.status,
          'agent_machine.stop_reason': event.stopReason ?? undefined,
          'agent_machine.steps': event.stepCount,
          'agent_machine.cost': event.usage.cost,
        });
        if (event.status === 'failed')
          failed(
            span,
            run.error ?? { name: 'Error', message: `Run failed: ${event.stopReason}` },
            this.options.recordContent,
          );
        this.closeRun(run, at);
        return;
      }
    }
  }

  private startToolSpan(run: RunSpans, id: string, name: string, args: unknown, at?: number) {
    const agent = this.agentSpan(run, at);
    if (!agent) return undefined;
    const span = this.options.tracer.startSpan(
      `execute_tool ${name}`,
      {
        kind: INTERNAL,
        startTime: at,
        attributes: {
          'gen_ai.operation.name': 'execute_tool',
          'gen_ai.tool.name': name,
          'gen_ai.tool.call.id': id,
          'gen_ai.tool.type': 'function',
          'gen_ai.tool.call.arguments':
            this.options.recordContent && args !== undefined ? JSON.stringify(args) : undefined,
        },
      },
      (this.api as OpenTelemetryApi).trace.setSpan(run.context, agent),
    );
    run.tools.set(id, span);
    return span;
  }

  /**
   * The caller's execute_tool span of a subagent's run. A call resumed after a wait for approval
   * reports no `tool.started` (it started before the wait), so its span is made when the child goes on.
   */
  private callerToolSpan(caller: NonNullable<FollowedRun['caller']>, name: string, at?: number) {
    const run = this.runs.get(caller.actor);
    if (!run) return undefined;
    return (
      run.tools.get(caller.toolCallId) ?? this.startToolSpan(run, caller.toolCallId, name, undefined, at)
    );
  }

  /** The run's `invoke_agent` span; after a wait for approval, a new one linked to the waiting run's. */
  private agentSpan(run: RunSpans, at?: number): TelemetrySpan | null {
    if (run.agent || !run.waiting) return run.agent;
    const { agentId, executionId } = run.ids;
    this.awaited.delete(awaitedKey({ agentId, executionId }));
    return this.startAgentSpan(run, agentId, executionId, at);
  }

  private startAgentSpan(run: RunSpans, agentId: string, executionId: string, at?: number): TelemetrySpan {
    run.ids = { agentId, executionId };
    run.agent = this.options.tracer.startSpan(
      `invoke_agent ${run.name}`,
      {
        kind: INTERNAL,
        startTime: at,
        attributes: {
          'gen_ai.operation.name': 'invoke_agent',
          'gen_ai.agent.name': run.name,
          'gen_ai.agent.id': agentId,
          'gen_ai.conversation.id': run.sessionId(),
          'agent_machine.execution.id': executionId,
        },
        links: run.waiting ? [run.waiting] : undefined,
      },
      run.context,
    );
    run.waiting = null;
    return run.agent;
  }

  private closeRun(run: RunSpans, at?: number): void {
    for (const span of run.tools.values()) span.end(at);
    run.tools.clear();
    run.agent?.end(at);
    run.agent = null;
  }
}

/** Runs waiting for approval are remembered by agent and execution: the decided run has the same ids. */
const awaitedKey = (ids: { agentId: string; executionId: string }) => `${ids.agentId} ${ids.executionId}`;

/**
 * Marks `span` failed with the error's type. An error's message may quote content (a tool's raw
 * arguments, a prompt a provider echoes), so without `recordContent` the status says only the type.
 */

function failed(
  span: TelemetrySpan,
  error: { name: string; message: string; code?: string | null },
  recordContent: boolean | undefined,
): void {
  const type = error.code || error.name;
  span.setStatus({
    code: ERROR,
    message: recordContent
      ? error.message
      : `${type} (the error message is recorded only with telemetry: { recordContent: true })`,
  });
  span.setAttribute('error.type', type);
}

/**
 * The driver's context with its ledger reports also set on the model call's span: the scopes, the
 * worst case reserved and what was settled (`agent_machine.ledger.*`).
 */
function withLedgerAttributes(context: DriverContext, span: TelemetrySpan): DriverContext {
  return Object.create(context, {
    report: {
      value: (event: ReportEvent) => {
        if (event.type === 'ledger.reserved')
          span.setAttributes({
            'agent_machine.ledger.scopes': [...event.scopes],
            'agent_machine.ledger.reserved_cost': event.cost ?? undefined,
            'agent_machine.ledger.reserved_tokens': event.tokens ?? undefined,
          });
        else if (event.type === 'ledger.settled')
          span.setAttributes({
            'agent_machine.ledger.settled_cost': event.cost,
            'agent_machine.ledger.settled_tokens': event.tokens,
            'agent_machine.ledger.released': event.released,
          });
        context.report(event);
      },
    },
  });
}
