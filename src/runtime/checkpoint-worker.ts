/**
 * The `checkpoint` worker: every save of a run, one worker per execution that saves (not a promise
 * actor invoked per save: the actor, its start and its snapshots cost more than the memory store's
 * save itself, issue 38). A request saves the state under the session over the version last saved,
 * or, with `intent`, the step's intent (intent-save.ts).
 */
import type { CheckpointRequest } from '../../machines/agentLoop';
import { isPromise } from '../hooks/hook-stack';
import { NoSessionStoreError } from '../persistence/errors';
import type { SessionStore } from '../persistence/session-store';
import type { AgentState } from '../state/agent-state';
import { saveIntent, type UnsafeCalls } from './intent-save';
import type { NestedIntents } from './nested-intents';
import { stepWorker } from './step-worker';

export interface CheckpointParts {
  readonly store: SessionStore | undefined;
  /** The subagents' intents saved into this agent's session meanwhile (their versions go first). */
  readonly nested: NestedIntents;
  readonly unsafe: UnsafeCalls;
  /** The state as it is saved under a session (its calls signed with an `approvalSecret`). */
  readonly sealed: (state: AgentState, sessionId: string) => AgentState;
}

type Session = NonNullable<CheckpointRequest['session']>;

export function checkpointWorker({ store, nested, unsafe, sealed }: CheckpointParts) {
  /** Saves `state` in the session, over the version last saved (or a child's intent saved meanwhile). */
  const saveState = (session: Session, state: AgentState): Promise<number> => {
    if (!store) throw new NoSessionStoreError('Checkpointing');
    const { id } = session;
    const saved = sealed(state, id);
    const version = nested.versionFor(id, session.version);
    return isPromise(version)
      ? version.then((v) => store.save(id, saved, v))
      : store.save(id, saved, version);
  };
  return stepWorker<CheckpointRequest, number | null>('checkpoint', (request, worker, signal) =>
    request.intent
      ? saveIntent(request, worker, signal.signal, unsafe, saveState)
      : saveState(request.session as Session, request.state),
  );
}
