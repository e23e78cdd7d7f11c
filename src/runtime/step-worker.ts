import { fromCallback } from 'xstate';
import type { CancelRequest, WorkerId, WorkerInput, WorkRequest } from '../../machines/agentLoop';
import { isPromise } from '../hooks/hook-stack';
import type { AgentState } from '../state/agent-state';

/**
 * One of the loop's workers (`hooks`, `driver`, `toolExecutor`, `checkpoint`): an actor that lives
 * as long as the part of the run it serves, runs `work` for each `work` request and answers the
 * agent actor with `<id>.done` (the new state; the checkpoint's, the new version) or `<id>.error`, echoing the request's `token` (the agent drops an
 * answer whose token is not the one it waits for). Work that returns synchronously is answered at
 * once (no promise turn). The chart sends one request at a time; a request sent while another is
 * in flight supersedes it (the earlier answer is dropped).
 *
 * `work` gets the worker's input (`WorkerInput`: its agent actor and what it needs of the agent's
 * context), given when the agent made it; it does not read its agent's snapshot for them.
 *
 * Each request has an AbortSignal of its own, made when the work first reads it (`signal`): an
 * AbortController costs about 2 µs, a measurable share of a step, and tool steps and hook stages
 * mostly never read one (the driver's work reads it at once: a model call takes it).
 * `cancel`, or stopping the worker, while a request is in flight aborts its signal and drops its
 * answer; a finished request's signal is never aborted, so what a finished call left running is
 * left alone.
 */
export function stepWorker<R extends WorkRequest, O = AgentState>(
  id: WorkerId | 'checkpoint',
  work: (request: R, worker: WorkerInput, signal: RequestSignal) => O | Promise<O>,
) {
  const answers: AnswerTypes = { done: `${id}.done`, error: `${id}.error` };
  // The worker's state is an object with methods, not closures: the build keeps function names
  // (`keepNames`), which makes every named closure a slow dictionary-mode object when it is made.
  return fromCallback<R | CancelRequest, WorkerInput>(({ input, receive, sendBack }) => {
    const worker = new WorkerRun<R, O>(
      answers,
      (request: R, signal) => work(request, input, signal),
      sendBack,
    );
    receive((request) => (request.type === 'cancel' ? worker.cancel() : worker.take(request)));
    return () => worker.cancel();
  });
}

interface AnswerTypes {
  readonly done: string;
  readonly error: string;
}

/** An answer to the agent actor (`WorkerAnswer`: a new state, or the checkpoint worker's new version). */
type Answer<O> =
  | { type: string; output: O; token: unknown }
  | { type: string; error: unknown; token: unknown };

/** One worker actor's requests: the one in flight, whose answer is sent; any other's is dropped. */
class WorkerRun<R extends WorkRequest, O> {
  #inFlight: RequestSignal | null = null;

  constructor(
    private readonly answers: AnswerTypes,
    private readonly work: (request: R, signal: RequestSignal) => O | Promise<O>,
    private readonly sendBack: (event: Answer<O>) => void,
  ) {}

  take(request: R): void {
    const mine = new RequestSignal();
    this.#inFlight = mine;
    const { token } = request;
    const { done, error: failed } = this.answers;
    let result: O | Promise<O>;
    try {
      result = this.work(request, mine);
    } catch (error) {
      this.answer(mine, { type: failed, error, token });
      return;
    }
    if (!isPromise(result)) this.answer(mine, { type: done, output: result, token });
    else
      result.then(
        (output: O) => this.answer(mine, { type: done, output, token }),
        (error: unknown) => this.answer(mine, { type: failed, error, token }),
      );
  }

  cancel(): void {
    this.#inFlight?.abort();
    this.#inFlight = null;
  }

  private answer(request: RequestSignal, event: Answer<O>): void {
    if (this.#inFlight !== request) return;
    this.#inFlight = null;
    this.sendBack(event);
  }
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
