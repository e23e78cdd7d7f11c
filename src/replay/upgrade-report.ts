/** What `agent.verifyUpgrade` takes and answers (verify-upgrade.ts does the check). */

import type { SessionStore } from '../persistence/session-store';
import type { ReplayDivergence } from './replay-tracks';

/**
 * `'ok'`: migrates, and replays with no divergence; `'changed'`: migrates and can go on, but the
 * replay diverges (new behaviour from that step); `'orphaned'`: cannot go on (see `reason`);
 * `'unreplayable'`: the recording cannot be replayed (`UnreplayableRunError`, see `reason`).
 */
export type UpgradeVerdict = 'ok' | 'changed' | 'orphaned' | 'unreplayable';

/** What `verifyUpgrade` found for one session. */
export interface SessionUpgradeReport {
  readonly sessionId: string;
  /** The version of the agent that saved it (null: saved before versions, or by an agent without one). */
  readonly fromVersion: string | null;
  readonly verdict: UpgradeVerdict;
  /** For `'changed'`: the first divergence, as `agent.replay` gives it. */
  readonly divergence?: ReplayDivergence;
  /** For `'orphaned'` and `'unreplayable'` (and a session with nothing to replay): why. */
  readonly reason?: string;
}

export interface UpgradeReport {
  /** False when any session is orphaned. */
  readonly ok: boolean;
  /** One per session, in the order of `options.sessions` or of `store.list()`. */
  readonly sessions: readonly SessionUpgradeReport[];
}

export interface VerifyUpgradeOptions {
  /** The sessions to check. Default: every session of the store. */
  readonly sessions?: readonly string[];
  /** Sessions checked at a time. Default 4. */
  readonly concurrency?: number;
}

/** The store `verifyUpgrade` reads: it only loads and lists (a read-only store will do). */
export type UpgradeSource = Pick<SessionStore, 'load' | 'list'>;
