import type { AgentStep } from './agent-step';
import type { ExecutionContinuation } from './execution-continuation';
import { decodePart } from './serialization';
import type { Usage } from './usage';

/** A completed step with its timing and the continuation as it stood when the step ended. */
export class StepExecution {
  static fromJSON(data: unknown): StepExecution {
    return decodePart.stepExecution(data);
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
    return {
      step: this.agentStep.toJSON(),
      continuation: this.continuationAtEnd.toJSON(),
      startedAt: new Date(this.startedAtMs).toISOString(),
      completedAt: new Date(this.completedAtMs).toISOString(),
    };
  }
}
