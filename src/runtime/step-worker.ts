import { type AnyActorRef, fromCallback } from 'xstate';
import type {
  CancelRequest,
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
 * `<id>.done` (the new state) or `<id>.error`, echoing the request's `token` (the agent drops an
 * answer whose token is not the one it waits for). Work that returns synchronously is answered at
 * once (no promise turn). The chart sends one request at a time; a request sent while another is
 * in flight supersedes it (the earlier answer is dropped).
 *
 * Each request has an AbortSignal of its own, made when the work first reads it (`signal()`): an
 * AbortController costs about 2 µs, a measurable share of a step, and most steps never read one.
 * `cancel`, or stopping the worker, while a request is in flight aborts its signal and drops its
 * answer; a finished request's signal is never aborted, so what a finished call left running is
 * left alone.
 */
export function stepWorker<R extends WorkRequest>(
  id: WorkerId,
  work: (request: R, agent: AnyActorRef, signal: () => AbortSignal) => AgentState | Promise<AgentState>,
) {
  const doneType = `${id}.done` as const;
  const errorType = `${id}.error` as const;
  return fromCallback<R | CancelRequest, WorkerInput>(({ input, receive, sendBack }) => {
    let requests = 0;
    /** The request in flight (0: none); answers of any other request are dropped. */
    let current = 0;
    let abortCurrent: (() => void) | null = null;
    const cancel = () => {
      if (current === 0) return;
      current = 0;
      abortCurrent?.();
      abortCurrent = null;
    };
    receive((request) => {
      if (request.type === 'cancel') return cancel();
      const mine = ++requests;
      current = mine;
      let controller: AbortController | undefined;
      let aborted = false;
      const signal = () => {
        if (!controller) {
          controller = new AbortController();
          // read only after the request was cancelled: the signal is aborted already
          if (aborted) controller.abort();
        }
        return controller.signal;
      };
      abortCurrent = () => {
        aborted = true;
        controller?.abort();
      };
      const answer = (event: WorkerAnswer) => {
        if (current !== mine) return;
        current = 0;
        abortCurrent = null;
        sendBack(event);
      };
      const done = (output: AgentState) => answer({ type: doneType, output, token: request.token });
      const failed = (error: unknown) => answer({ type: errorType, error, token: request.token });
      let result: AgentState | Promise<AgentState>;
      try {
        result = work(request, input.agent, signal);
      } catch (error) {
        return failed(error);
      }
      if (isPromise(result)) result.then(done, failed);
      else done(result);
    });
    return cancel;
  });
}
