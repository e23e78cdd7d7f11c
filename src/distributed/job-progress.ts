import type { Job } from 'bullmq';
import type { EventSource } from '../state/event-source';
import type { AgentEvent } from '../state/loop-events';
import type { AgentJobRequest, AgentStepProgress } from './agent-job';

/** The run's listener that reports its steps as the job's progress, and a wait for the reports in flight. */
export interface ProgressReporter {
  /** The run's listener, or null when the job's progress is not reported (no one listens). */
  readonly onEvent: ((event: AgentEvent, source: EventSource) => void) | null;
  flush(): Promise<void>;
}

/**
 * Reports each `step.finished` of the run as the job's progress, in order: only for a job whose
 * client listens (`progress: true` in its data, set by `onProgress` or `progress` at enqueue time),
 * since each report is a script, a hash write and an event in the queue's stream.
 */
export function progressReporter(
  job: Job,
  request: AgentJobRequest,
  workerId: string,
  onError: (error: Error) => void,
): ProgressReporter {
  if ((job.data as { progress?: true }).progress !== true)
    return { onEvent: null, flush: () => Promise.resolve() };
  const pending = new Set<Promise<void>>();
  const report = (event: Extract<AgentEvent, { type: 'step.finished' }>) => {
    const progress: AgentStepProgress = {
      type: 'step.finished',
      sessionId: request.sessionId,
      agent: request.agent,
      workerId,
      executionId: event.executionId,
      stepNumber: event.stepNumber,
      stepId: event.stepId,
      stepType: event.stepType,
      finishReason: event.finishReason,
      usage: event.usage,
      errors: event.errors.map((e) => ({ name: e.name, code: e.code, message: e.message })),
      durationMs: event.durationMs,
    };
    const update = job.updateProgress(progress as unknown as object).catch((error: unknown) => {
      onError(
        new Error(`The progress of job ${job.id} (step ${event.stepNumber}) could not be reported`, {
          cause: error,
        }),
      );
    });
    pending.add(update);
    void update.finally(() => pending.delete(update));
  };
  return {
    // the root agent's steps are the job's progress (a subagent's are not)
    onEvent: (event, source) => {
      if (event.type === 'step.finished' && source.subagent === null) report(event);
    },
    flush: async () => {
      await Promise.all([...pending]);
    },
  };
}
