/**
 * A decide job on a worker: a person's decisions on the calls a session waits for (its subagents'
 * included), and the rest of the run. The job marks the session before it decides, so that a
 * retry of the same job (its worker died or was closed) that finds its decisions already taken
 * resumes the run instead of refusing them as no longer pending. Decisions the run would refuse
 * (not pending, a bad signature or edit) fail the job before the mark, so it writes nothing.
 */
import type { Agent, ExecuteOptions } from '../runtime/agent-actor';
import { upgradeState } from '../runtime/agent-migrations';
import { type ApprovalInput, takeDecisions } from '../runtime/approvals';
import type { AgentState } from '../state/agent-state';
import { pendingMatches } from '../state/pending-approval';
import { JOB_METADATA_KEY } from './agent-job';

export async function runDecision(
  agent: Agent,
  request: { readonly sessionId: string; readonly decisions: readonly ApprovalInput[] },
  stored: { readonly state: AgentState; readonly version: number },
  jobMark: string,
  options: Omit<ExecuteOptions, 'sessionId'>,
): Promise<AgentState> {
  const { sessionId, decisions } = request;
  const store = agent.definition.store;
  if (!store) throw new TypeError('runDecision needs an agent with a store');
  if (stored.state.metadata()[JOB_METADATA_KEY] === jobMark) {
    const pending = stored.state.pendingApprovals();
    const taken = decisions.every((d) => pendingMatches(pending, d.toolCallId, d).length === 0);
    if (taken) return agent.resume(sessionId, options);
  } else {
    // A decision the run would refuse fails the job here, before the mark: nothing is saved then
    // (checked on the session as this version runs it: migrated, its edits against the new tools).
    await takeDecisions(upgradeState(agent.definition, stored.state), decisions, {
      secret: agent.definition.approvalSecret,
      sessionId,
      toolsAt: agent.toolsAt,
    });
    await store.save(sessionId, stored.state.withMetadata(JOB_METADATA_KEY, jobMark), stored.version);
  }
  return agent.decide(sessionId, decisions, options);
}
