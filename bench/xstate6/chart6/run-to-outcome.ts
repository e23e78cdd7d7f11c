/**
 * XState 6 port of the part of src/runtime/run-to-outcome.ts a run without signal or listener uses:
 * start, `execute`, resolve with the state at the first snapshot tagged outcome or awaitingDecisions,
 * stop. (The v5 one is an object with methods for its build's sake; the logic is the same.)
 */
import type { Actor, AnyActorLogic } from 'xstate';
import { LoopTag } from '../repo/machines/state-ids';
import type { AgentState } from '../repo/src/state/agent-state';

interface Snap {
  hasTag(tag: string): boolean;
  context: { state: AgentState };
}

export function runToOutcome(actor: Actor<AnyActorLogic>): Promise<AgentState> {
  const outcome = new Promise<AgentState>((resolve, reject) => {
    let settled = false;
    const subscription = actor.subscribe({
      next(snapshot: unknown) {
        const snap = snapshot as Snap;
        if (settled || !(snap.hasTag(LoopTag.outcome) || snap.hasTag(LoopTag.awaitingDecisions))) return;
        settled = true;
        subscription.unsubscribe();
        resolve(snap.context.state);
      },
      error(error: unknown) {
        if (settled) return;
        settled = true;
        reject(error);
      },
    });
    actor.send({ type: 'execute' });
  });
  actor.start();
  return outcome.finally(() => actor.stop());
}
