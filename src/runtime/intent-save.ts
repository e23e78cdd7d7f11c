/**
 * At most once: the intent of a step. Before a step's unsafe calls start, the step is saved with the
 * calls about to start named (`AgentState.withToolsStarting`): a crash in them leaves them waiting
 * for a person as interrupted, never run twice unasked (docs/sessions.md, "At most once: the words").
 * A subagent, which has no session, hands its intent to its caller (`WorkerInput.intentSave`), up
 * to the root's session (nested-intents.ts).
 */
import type { CheckpointRequest, WorkerInput } from '../../machines/agentLoop';
import type { McpServers } from '../mcp/mcp-servers';
import type { AgentState } from '../state/agent-state';
import { type ToolSet, toolEffect } from '../tools/define-tool';
import { unsafeCallsToStart } from './approvals';

/** The unsafe calls of an agent's steps: which may start (the chart's guard), which start now. */
export class UnsafeCalls {
  /** No unsafe tool and no MCP server: no step starts one, and the chart's `intent` passes at no cost. */
  readonly possible: boolean;

  constructor(
    private readonly tools: ToolSet,
    private readonly mcp: McpServers | undefined,
  ) {
    this.possible = mcp !== undefined || Object.values(tools).some((tool) => toolEffect(tool) === 'unsafe');
  }

  /**
   * The chart's `startsUnsafeCalls`: whether `state`'s step may start an unsafe call. An MCP tool's
   * effect is known once its server listed it: a call to a tool not known yet may be unsafe.
   */
  mayStart(state: AgentState): boolean {
    if (!this.possible) return false;
    const known = this.mcp?.knownToolSet(this.tools) ?? this.tools;
    return unsafeCallsToStart(state, known, this.mcp !== undefined).length > 0;
  }

  /** The unsafe calls of `state`'s step that start now: its intent names them before any starts. */
  async starting(state: AgentState, signal: AbortSignal): Promise<string[]> {
    const { mcp, tools } = this;
    return unsafeCallsToStart(state, mcp ? await mcp.callableToolSet(tools, signal) : tools);
  }
}

/**
 * Saves the step of `request` with the unsafe calls it starts now, before any starts: in the run's
 * session (`saveState`: the new version), or, for a subagent (no session), through its caller (null).
 * A step that starts none saves nothing (null).
 */
export async function saveIntent(
  { state, session }: CheckpointRequest,
  worker: WorkerInput,
  signal: AbortSignal,
  unsafe: UnsafeCalls,
  saveState: (session: NonNullable<CheckpointRequest['session']>, state: AgentState) => Promise<number>,
): Promise<number | null> {
  const starting = await unsafe.starting(state, signal);
  if (starting.length === 0) return null;
  const intent = state.withToolsStarting(starting);
  if (session) return saveState(session, intent);
  await worker.intentSave?.(intent);
  return null;
}
