/**
 * How the agent machine talks to its workers (`hooks`, `driver`, `toolExecutor`, `checkpoint`): the
 * requests it sends them and the answers they send back. What each is made with (`WorkerInput`)
 * is in `loop-context.ts`, beside the context it is taken from. The runtime implements the workers
 * (src/runtime).
 */
import type { AgentError } from '../src/state/agent-error';
import type { AgentState } from '../src/state/agent-state';

import type { HookStage } from '../src/state/hook-stage';

export type { HookStage };

/**
 * The workers live as long as the part of the run they serve (`hooks` and `checkpoint` the
 * execution, `driver` and `toolExecutor` the step cycle) and take one request at a time: `{ type: 'work', state }` (the
 * hooks worker also gets the stage and, for onError, the error). They answer the agent with
 * `<id>.done` (`output`: the new state) or `<id>.error` (`error`), echoing the request's `token`;
 * work that finishes synchronously (a stack of plain-function hooks) is answered at once. `cancel`
 * aborts the request in flight and drops its answer; so does stopping the worker. An answer already
 * on its way when its wait was left (a stop, even a new execution, came first) carries a token
 * that is not the one waited for now, and is dropped.
 */
export interface WorkRequest {
  readonly type: 'work';
  readonly state: AgentState;
  /** Which wait the request belongs to: the state it was made with (see `isStale`); the answer echoes it. */
  readonly token: AgentState;
}
export interface HooksRequest extends WorkRequest {
  readonly stage: HookStage;
  readonly error: AgentError | null;
}
/**
 * A save, to the `checkpoint` worker (it lives as long as the execution, for a run that saves: one
 * with a session, or a subagent whose caller keeps its intent): the state under the session at
 * the version last saved; an `intent` save only if the step starts unsafe calls (a subagent's,
 * `session` null, through its caller). It answers `checkpoint.done` (`output`: the new version,
 * or null when nothing was saved in the session) or `checkpoint.error`.
 */
export interface CheckpointRequest extends WorkRequest {
  /** The session and the version last saved (`LoopSession`); null for a subagent's intent. */
  readonly session: { readonly id: string; readonly version: number | null } | null;
  readonly intent: boolean;
}
type CheckpointAnswer =
  | { type: 'checkpoint.done'; output: number | null; token?: unknown }
  | { type: 'checkpoint.error'; error: unknown; token?: unknown };
export interface CancelRequest {
  readonly type: 'cancel';
}
/** The workers whose answer is a new state. */
export type WorkerId = 'hooks' | 'driver' | 'toolExecutor';
/** What the workers answer: a new state, or (`checkpoint`) a new version. */
export type WorkerAnswer =
  | { type: `${WorkerId}.done`; output: AgentState; token?: unknown }
  | { type: `${WorkerId}.error`; error: unknown; token?: unknown }
  | CheckpointAnswer;
