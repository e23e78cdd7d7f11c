import { getEventListeners } from 'node:events';
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
 * that returns synchronously is answered at once (no promise turn). `cancel`, or stopping the
 * worker, while a request is in flight aborts its signal and drops its answer; a worker stopped
 * with nothing in flight aborts nothing, so what a finished call left running is left alone. The
 * chart sends one request at a time; a request sent while another is in flight would supersede it
 * (the earlier answer is dropped).
 *
 * Requests share an AbortSignal while nothing listens on it, and get a fresh one as soon as a call
 * has left a listener behind (so listeners never pile up over an execution); an AbortController
 * per request would cost a measurable share of a step.
 */
export function stepWorker<R extends WorkRequest>(
  id: WorkerId,
  work: (request: R, agent: AnyActorRef, signal: AbortSignal) => AgentState | Promise<AgentState>,
) {
  return fromCallback<R | CancelRequest, WorkerInput>(({ input, receive, sendBack }) => {
    let controller: AbortController | null = null;
    let requests = 0;
    /** The request in flight (0: none); answers of any other request are dropped. */
    let current = 0;
    const cancel = () => {
      if (current === 0) return;
      current = 0;
      controller?.abort();
      controller = null;
    };
    receive((request) => {
      if (request.type === 'cancel') return cancel();
      if (!controller || getEventListeners(controller.signal, 'abort').length > 0)
        controller = new AbortController();
      const mine = ++requests;
      current = mine;
      const stage = (request as { stage?: HookStage }).stage;
      const answer = (event: WorkerAnswer) => {
        if (current !== mine) return;
        current = 0;
        sendBack(stage === undefined ? event : { ...event, stage });
      };
      const done = (output: AgentState) => answer({ type: `${id}.done`, output });
      const failed = (error: unknown) => answer({ type: `${id}.error`, error });
      let result: AgentState | Promise<AgentState>;
      try {
        result = work(request, input.agent, controller.signal);
      } catch (error) {
        return failed(error);
      }
      if (isPromise(result)) result.then(done, failed);
      else done(result);
    });
    return cancel;
  });
}
