import type { AnyActorRef } from 'xstate';
import type { Driver } from '../drivers/driver';
import type { AgentError } from '../state/agent-error';
import type { AgentEvent } from '../state/loop-events';
import { genAiMessages } from './gen-ai-messages';
import { loadOpenTelemetryApi, type OpenTelemetryApi } from './open-telemetry-api';
import type { TelemetryOptions, TelemetrySpan } from './telemetry-options';

// OpenTelemetry's SpanKind and SpanStatusCode values (numbers in the API; not imported, see telemetry-options).
const INTERNAL = 0;
const CLIENT = 2;
const ERROR = 2;

/** The spans of one agent actor: its execution's `invoke_agent` and its open `execute_tool` spans. */
interface RunSpans {
  readonly name: string;
  /** The caller's execute_tool span, for a subagent; else the context active when the run starts is the parent. */
  readonly parentSpan: () => TelemetrySpan | undefined;
  readonly sessionId: () => string | undefined;
  agent: TelemetrySpan | null;
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
 * joins it. `@opentelemetry/api` is loaded on first use (`ready`).
 */
export class AgentTracing {
  /** Resolves once `@opentelemetry/api` is loaded; rejects with TelemetryDependencyMissingError. */
  readonly ready: Promise<void>;
  private api: OpenTelemetryApi | null = null;
  private readonly runs = new WeakMap<object, RunSpans>();

  constructor(private readonly options: TelemetryOptions) {
    this.ready = loadOpenTelemetryApi().then((api) => {
      this.api = api;
    });
    // The rejection is reported by every run, which awaits `ready` before it starts.
    this.ready.catch(() => undefined);
  }

  /** Traces the executions of `actor` (an agent actor, root or subagent) from its events. */
  follow(actor: AnyActorRef, run: FollowedRun): void {
    const { caller } = run;
    const spans: RunSpans = {
      name: run.name,
      // read when the run starts: by then the caller's execute_tool span exists, even if its events waited
      parentSpan: () => caller && this.runs.get(caller.actor)?.tools.get(caller.toolCallId),
      sessionId: () =>
        (actor.getSnapshot() as { context?: { session?: { id?: string } | null } }).context?.session?.id,
      agent: null,
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

  /** The driver with a `chat` span around each model call, a child of its run's `invoke_agent` span. */
  traceDriver(driver: Driver, requestModel: string | undefined): Driver {
    return {
      name: driver.name,
      infer: async (state, context) => {
        // a run whose first events wait for the API: its invoke_agent span is made once it is loaded
        if (!this.api) await this.ready;
        const run = context.run ? this.runs.get(context.run) : undefined;
        if (!run?.agent || !this.api) return driver.infer(state, context);
        const span = this.options.tracer.startSpan(
          requestModel ? `chat ${requestModel}` : 'chat',
          {
            kind: CLIENT,
            attributes: { 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': requestModel },
          },
          this.api.trace.setSpan(run.context, run.agent),
        );
        try {
          const answered = await driver.infer(state, context);
          const step = answered.currentStep();
          if (step) {
            const usage = step.inferenceResponse().usage;
            span.setAttributes({
              'gen_ai.response.model': step.model() ?? requestModel,
              'gen_ai.usage.input_tokens': usage.inputTokens,
              'gen_ai.usage.output_tokens': usage.outputTokens,
              'gen_ai.response.finish_reasons': step.finishReason() ? [step.finishReason() as string] : [],
            });
            if (this.options.recordContent) {
              span.setAttributes({
                'gen_ai.input.messages': genAiMessages(step.inputMessages()),
                'gen_ai.output.messages': genAiMessages(step.outputMessages(), step.finishReason()),
              });
            }
          }
          return answered;
        } catch (error) {
          failed(span, error as Error, this.options.recordContent);
          throw error;
        } finally {
          span.end();
        }
      },
    };
  }

  private record(run: RunSpans, event: AgentEvent, at?: number): void {
    const { tracer } = this.options;
    const api = this.api as OpenTelemetryApi;
    switch (event.type) {
      case 'execution.started': {
        this.closeRun(run, at);
        const active = api.context.active();
        const parent = run.parentSpan();
        run.context = parent ? api.trace.setSpan(active, parent) : active;
        run.error = null;
        run.agent = tracer.startSpan(
          `invoke_agent ${run.name}`,
          {
            kind: INTERNAL,
            startTime: at,
            attributes: {
              'gen_ai.operation.name': 'invoke_agent',
              'gen_ai.agent.name': run.name,
              'gen_ai.agent.id': event.agentId,
              'gen_ai.conversation.id': run.sessionId(),
              'agent_machine.execution.id': event.executionId,
            },
          },
          run.context,
        );
        return;
      }
      case 'tool.started': {
        if (!run.agent) return;
        const span = tracer.startSpan(
          `execute_tool ${event.toolName}`,
          {
            kind: INTERNAL,
            startTime: at,
            attributes: {
              'gen_ai.operation.name': 'execute_tool',
              'gen_ai.tool.name': event.toolName,
              'gen_ai.tool.call.id': event.toolCallId,
              'gen_ai.tool.type': 'function',
              'gen_ai.tool.call.arguments': this.options.recordContent
                ? JSON.stringify(event.args)
                : undefined,
            },
          },
          api.trace.setSpan(run.context, run.agent),
        );
        run.tools.set(event.toolCallId, span);
        return;
      }
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
      case 'approval.requested':
        run.agent?.setAttribute('agent_machine.awaiting_approval', true);
        return;
      case 'execution.finished': {
        const span = run.agent;
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

  private closeRun(run: RunSpans, at?: number): void {
    for (const span of run.tools.values()) span.end(at);
    run.tools.clear();
    run.agent?.end(at);
    run.agent = null;
  }
}

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
