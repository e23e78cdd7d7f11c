import { type AnyActorRef, fromCallback } from 'xstate';
import type {
  CancelRequest,
  HookStage,
  WorkerAnswer,
  WorkerId,
  WorkerInput,
  WorkRequest,
} from '../../machines/agentLoop';
import { isPromise } from '../hooks/hook-stack';
import type { AgentState } from '../state/agent-state';

/**
 * One of the loop's workers (`hooks`, `driver`, `toolExecutor`): an actor that lives as long as the
 * part of the run it serves, runs `work` for each `work` request and answers the agent actor with
 * `<id>.done` (the new state) or `<id>.error`, carrying the request's `stage` when it has one. Work
 * that returns synchronously is answered at once (no promise turn). Each request gets an
 * AbortSignal of its own; `cancel`, or stopping the worker, while a request is in flight aborts it
 * and drops its answer. A worker stopped with nothing in flight aborts nothing, so what a finished
 * call left running is left alone. The chart sends one request at a time; a request sent while
 * another is in flight would supersede it (the earlier answer is dropped).
 */
export function stepWorker<R extends WorkRequest>(
  id: WorkerId,
  work: (request: R, agent: AnyActorRef, signal: AbortSignal) => AgentState | Promise<AgentState>,
) {
  return fromCallback<R | CancelRequest, WorkerInput>(({ input, receive, sendBack }) => {
    /** The request in flight, if any: answers of any other (cancelled) request are dropped. */
    let inFlight: AbortController | null = null;
    const cancel = () => {
      inFlight?.abort();
      inFlight = null;
    };
    receive((request) => {
      if (request.type === 'cancel') return cancel();
      // A signal per request: listeners a call leaves on it go with it, not with the execution.
      const mine = new AbortController();
      inFlight = mine;
      const stage = (request as { stage?: HookStage }).stage;
      const answer = (event: WorkerAnswer) => {
        if (inFlight !== mine) return;
        inFlight = null;
        sendBack(stage === undefined ? event : { ...event, stage });
      };
      const done = (output: AgentState) => answer({ type: `${id}.done`, output });
      const failed = (error: unknown) => answer({ type: `${id}.error`, error });
      let result: AgentState | Promise<AgentState>;
      try {
        result = work(request, input.agent, mine.signal);
      } catch (error) {
        return failed(error);
      }
      if (isPromise(result)) result.then(done, failed);
      else done(result);
    });
    return cancel;
  });
}
