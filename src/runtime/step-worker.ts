import { type AnyActorRef, fromCallback } from 'xstate';
import type { WorkerAnswer, WorkerInput, WorkRequest } from '../../machines/agentLoop';
import type { AgentState } from '../state/agent-state';

/**
 * One of the step's workers (`driver`, `toolExecutor`): an actor that lives as long as the step
 * cycle, runs `work` for each `{ type: 'work', state }` request and answers the agent actor with
 * `<id>.done` (the new state) or `<id>.error`. Its requests share one AbortSignal; stopping the
 * worker while a request is in flight (a `stop`, the run failing) aborts it. A worker stopped
 * with nothing in flight aborts nothing, so what a finished call left running is left alone.
 */
export function stepWorker(
  id: 'driver' | 'toolExecutor',
  work: (state: AgentState, agent: AnyActorRef, signal: AbortSignal) => Promise<AgentState>,
) {
  return fromCallback<WorkRequest, WorkerInput>(({ input, receive, sendBack }) => {
    const controller = new AbortController();
    let inFlight = 0;
    const answer = (event: WorkerAnswer) => {
      inFlight--;
      sendBack(event);
    };
    receive((request) => {
      inFlight++;
      new Promise<AgentState>((resolve) => resolve(work(request.state, input.agent, controller.signal))).then(
        (output) => answer({ type: `${id}.done`, output } as WorkerAnswer),
        (error: unknown) => answer({ type: `${id}.error`, error } as WorkerAnswer),
      );
    });
    return () => {
      if (inFlight > 0) controller.abort();
    };
  });
}
