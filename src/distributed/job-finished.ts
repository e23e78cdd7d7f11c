import type { Job, Queue, QueueEvents } from 'bullmq';
import { InvalidArgumentError } from '../state/errors';
import { type AgentJobData, type AgentJobReturnValue, parseFailureReason } from './agent-job';
import { AgentJobFailedError, AgentJobLostError, AgentJobTimeoutError } from './errors';

/** How often a job waited for is looked up in Redis (JOB_LOST after two looks that do not find it). */
const JOB_LOST_CHECK_MS = 2_000;

/** Waits for a job's return value: AgentJobFailedError, AgentJobTimeoutError or AgentJobLostError otherwise. */
export async function finished(
  job: Job,
  data: AgentJobData,
  queue: Queue,
  queueEvents: QueueEvents,
  timeoutMs: number | undefined,
): Promise<AgentJobReturnValue> {
  if (timeoutMs !== undefined && (!Number.isFinite(timeoutMs) || timeoutMs <= 0))
    throw new InvalidArgumentError('timeoutMs', `${timeoutMs} is not a positive number of milliseconds`);
  let value: AgentJobReturnValue;
  const lost = watchForLoss(job, data, queue);
  try {
    value = (await Promise.race([
      job.waitUntilFinished(queueEvents, timeoutMs),
      lost.promise,
    ])) as AgentJobReturnValue;
  } catch (error) {
    if (error instanceof AgentJobLostError) throw error;
    const reason = (error as Error)?.message ?? String(error);
    if (timeoutMs !== undefined && reason.includes('timed out before finishing'))
      throw new AgentJobTimeoutError(job.id as string, timeoutMs, { cause: error });
    const { name, code } = parseFailureReason(reason);
    throw new AgentJobFailedError(job.id as string, data.sessionId, name, code, reason);
  } finally {
    lost.stop();
  }
  return value;
}

/**
 * Looks the job up every JOB_LOST_CHECK_MS while it is waited for; rejects with AgentJobLostError
 * when two looks in a row do not find it (one could miss a job removed as it completed, whose
 * completion is on its way). A look that fails (Redis down) is not counted.
 */
function watchForLoss(job: Job, data: AgentJobData, queue: Queue) {
  let timer: NodeJS.Timeout | null = null;
  let stopped = false;
  let misses = 0;
  const promise = new Promise<never>((_, reject) => {
    const look = async () => {
      timer = null;
      const state = await queue.getJobState(job.id as string).catch(() => null);
      if (stopped) return;
      misses = state === 'unknown' ? misses + 1 : 0;
      if (misses >= 2) return reject(new AgentJobLostError(job.id as string, data.sessionId));
      timer = setTimeout(() => void look(), JOB_LOST_CHECK_MS);
    };
    timer = setTimeout(() => void look(), JOB_LOST_CHECK_MS);
  });
  promise.catch(() => undefined);
  return {
    promise,
    stop: () => {
      stopped = true;
      if (timer) clearTimeout(timer);
    },
  };
}
