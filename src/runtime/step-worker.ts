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
 * Each request has an AbortSignal of its own, made when the work first reads it (`signal`): an
 * AbortController costs about 2 µs, a measurable share of a step, and most steps never read one.
 * `cancel`, or stopping the worker, while a request is in flight aborts its signal and drops its
 * answer; a finished request's signal is never aborted, so what a finished call left running is
 * left alone.
 */
export function stepWorker<R extends WorkRequest>(
  id: WorkerId,
  work: (request: R, agent: AnyActorRef, signal: RequestSignal) => AgentState | Promise<AgentState>,
) {
  const doneType = `${id}.done` as const;
  const errorType = `${id}.error` as const;
  return fromCallback<R | CancelRequest, WorkerInput>(({ input, receive, sendBack }) => {
    /** The request in flight; answers of any other request are dropped. */
    let inFlight: RequestSignal | null = null;
    const cancel = () => {
      inFlight?.abort();
      inFlight = null;
    };
    // one answering function per worker, not per request: a request's answer is dropped unless it is in flight
    const answer = (request: RequestSignal, event: WorkerAnswer) => {
      if (inFlight !== request) return;
      inFlight = null;
      sendBack(event);
    };
    receive((request) => {
      if (request.type === 'cancel') return cancel();
      const mine = new RequestSignal();
      inFlight = mine;
      const { token } = request;
      let result: AgentState | Promise<AgentState>;
      try {
        result = work(request, input.agent, mine);
      } catch (error) {
        return answer(mine, { type: errorType, error, token });
      }
      if (!isPromise(result)) return answer(mine, { type: doneType, output: result, token });
      result.then(
        (output) => answer(mine, { type: doneType, output, token }),
        (error: unknown) => answer(mine, { type: errorType, error, token }),
      );
    });
    return cancel;
  });
}

/** One request's AbortSignal, made when first read; read after the request was cancelled, it is aborted. */
export class RequestSignal {
  #controller: AbortController | undefined;
  #aborted = false;

  get signal(): AbortSignal {
    if (!this.#controller) {
      this.#controller = new AbortController();
      if (this.#aborted) this.#controller.abort();
    }
    return this.#controller.signal;
  }

  abort(): void {
    this.#aborted = true;
    this.#controller?.abort();
  }
}
