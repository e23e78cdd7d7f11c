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
 * `<id>.done` (the new state) or `<id>.error`. Work that returns synchronously is answered at once
 * (no promise turn). Requests share an AbortSignal; `cancel`, or stopping the worker, while a
 * request is in flight aborts it and drops its answer, and later requests get a fresh signal. A
 * worker stopped with nothing in flight aborts nothing, so what a finished call left running is
 * left alone. The chart sends one request at a time; a request sent while another is in flight
 * would supersede it (the earlier answer is dropped).
 */
export function stepWorker<R extends WorkRequest>(
  id: WorkerId,
  work: (request: R, agent: AnyActorRef, signal: AbortSignal) => AgentState | Promise<AgentState>,
) {
  return fromCallback<R | CancelRequest, WorkerInput>(({ input, receive, sendBack }) => {
    let controller: AbortController | undefined;
    /** The request in flight: answers of any other (cancelled) request are dropped. */
    let current = 0;
    let inFlight = false;
    const cancel = () => {
      if (!inFlight) return;
      controller?.abort();
      controller = undefined;
      inFlight = false;
      current++;
    };
    receive((request) => {
      if (request.type === 'cancel') return cancel();
      controller ??= new AbortController();
      const mine = ++current;
      inFlight = true;
      const answer = (event: WorkerAnswer) => {
        if (mine !== current) return;
        inFlight = false;
        sendBack(event);
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
