import { AgentStep } from './agent-step';
import type { AppendOnlyList } from './append-only-list';
import { ExecutionContinuation } from './execution-continuation';
import { decodeMessage, type Message, type MessageDecoder } from './message';
import { type StepExecutionJSON, type StoredStepExecutionJSON, stepExecutionSchema } from './schemas';
import type { Usage } from './usage';
import { validate } from './validation';

/** A completed step with its timing and the continuation as it stood when the step ended. */
export class StepExecution {
  static fromJSON(data: unknown): StepExecution {
    const json = validate(stepExecutionSchema, data, 'StepExecution');
    return StepExecution.fromParsed(json, json.step.inputMessages.map(decodeMessage));
  }

  /** @internal from a validated document, or the part of one that holds it, with its step's input messages */
  static fromParsed(
    json: StepExecutionJSON | StoredStepExecutionJSON,
    inputMessages: readonly Message[] | AppendOnlyList<Message>,
    decode: MessageDecoder = decodeMessage,
  ): StepExecution {
    return new StepExecution(
      AgentStep.fromParsed(json.step, inputMessages, decode),
      ExecutionContinuation.fromParsed(json.continuation),
      Date.parse(json.startedAt),
      Date.parse(json.completedAt),
    );
  }

  private constructor(
    private readonly agentStep: AgentStep,
    private readonly continuationAtEnd: ExecutionContinuation,
    private readonly startedAtMs: number,
    private readonly completedAtMs: number,
  ) {}

  static of(
    step: AgentStep,
    continuation: ExecutionContinuation,
    startedAt: number,
    completedAt: number,
  ): StepExecution {
    return new StepExecution(step, continuation, startedAt, completedAt);
  }

  id(): string {
    return this.agentStep.id();
  }
  step(): AgentStep {
    return this.agentStep;
  }
  continuation(): ExecutionContinuation {
    return this.continuationAtEnd;
  }
  startedAt(): Date {
    return new Date(this.startedAtMs);
  }
  completedAt(): Date {
    return new Date(this.completedAtMs);
  }
  /** Seconds. */
  duration(): number {
    return (this.completedAtMs - this.startedAtMs) / 1000;
  }
  usage(): Usage {
    return this.agentStep.usage();
  }

  toJSON() {
    return this.serialize((step) => step.toJSON());
  }

  /** @internal the serialized form with its step written by `encodeStep` (toJSON and the journal). */
  serialize<T>(encodeStep: (step: AgentStep) => T) {
    return {
      step: encodeStep(this.agentStep),
      continuation: this.continuationAtEnd.toJSON(),
      startedAt: new Date(this.startedAtMs).toISOString(),
      completedAt: new Date(this.completedAtMs).toISOString(),
    };
  }
}
