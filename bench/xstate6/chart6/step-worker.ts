/**
 * XState 6 port of src/runtime/step-worker.ts: `fromCallback` becomes `createCallbackLogic`; the
 * worker itself (one request in flight, its answer dropped once superseded or cancelled) is the v5 one.
 */
import { createCallbackLogic } from 'xstate';
import type { WorkerInput } from '../repo/machines/loop-context';
import type { CancelRequest, WorkerAnswer, WorkerId, WorkRequest } from '../repo/machines/worker-protocol';
import { RequestSignal } from '../repo/src/runtime/step-worker';
import type { AgentState } from '../repo/src/state/agent-state';

export function stepWorker<R extends WorkRequest>(
  id: WorkerId,
  work: (request: R, agent: unknown, signal: RequestSignal) => AgentState | Promise<AgentState>,
) {
  const answers = { done: `${id}.done`, error: `${id}.error` } as const;
  return createCallbackLogic<R | CancelRequest, WorkerInput>(({ input, receive, sendBack }) => {
    const worker = new WorkerRun(
      answers,
      (request: R, signal) => work(request, input.agent, signal),
      sendBack,
    );
    receive((request) => (request.type === 'cancel' ? worker.cancel() : worker.take(request)));
    return () => worker.cancel();
  });
}

class WorkerRun<R extends WorkRequest> {
  #inFlight: RequestSignal | null = null;

  constructor(
    private readonly answers: { readonly done: `${WorkerId}.done`; readonly error: `${WorkerId}.error` },
    private readonly work: (request: R, signal: RequestSignal) => AgentState | Promise<AgentState>,
    private readonly sendBack: (event: WorkerAnswer) => void,
  ) {}

  take(request: R): void {
    const mine = new RequestSignal();
    this.#inFlight = mine;
    const { token } = request;
    const { done, error: failed } = this.answers;
    let result: AgentState | Promise<AgentState>;
    try {
      result = this.work(request, mine);
    } catch (error) {
      this.answer(mine, { type: failed, error, token });
      return;
    }
    if (!(result instanceof Promise)) this.answer(mine, { type: done, output: result, token });
    else
      result.then(
        (output) => this.answer(mine, { type: done, output, token }),
        (error: unknown) => this.answer(mine, { type: failed, error, token }),
      );
  }

  cancel(): void {
    this.#inFlight?.abort();
    this.#inFlight = null;
  }

  private answer(request: RequestSignal, event: WorkerAnswer): void {
    if (this.#inFlight !== request) return;
    this.#inFlight = null;
    this.sendBack(event);
  }
}
