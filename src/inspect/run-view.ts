/** The run viewer's data shapes: plain, JSON-ready views of a run, its agents, steps and messages. */
import type { AgentState } from '../state/agent-state';
import { AgentMachineError } from '../state/errors';
import type { AgentStateJSON } from '../state/schemas';
import type { Trace } from './trace-schema';

/** Input that is neither a trace nor an AgentState. */
export class NotARunError extends AgentMachineError {
  static override get name(): string {
    return 'NotARunError';
  }

  constructor(detail: string) {
    super('NOT_A_RUN', `Not a trace or an AgentState: ${detail}`);
  }
}

/** What the viewer accepts: a trace, an AgentState, or an AgentState's `toJSON()`. */
export type RunInput = Trace | AgentState | AgentStateJSON;

export interface UsageView {
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly totalTokens: number;
  readonly cost: number;
}
export interface ErrorView {
  readonly name: string;
  readonly message: string;
  readonly code: string | null;
  /** The step it happened in (1-based), and the tool call if it was a tool's. */
  readonly stepNumber: number | null;
  readonly toolName: string | null;
}
export interface MessageView {
  readonly role: string;
  readonly content: string;
  readonly toolCalls?: ReadonlyArray<{ readonly id: string; readonly name: string; readonly args: string }>;
  readonly toolCallId?: string;
  readonly toolName?: string;
  readonly isError?: boolean;
}
export interface ToolView {
  readonly callId: string;
  readonly name: string;
  readonly args: string;
  /** The result as text (JSON for non-strings); null when the call failed. */
  readonly result: string | null;
  readonly error: ErrorView | null;
  readonly blocked: boolean;
  /** Milliseconds from the step's start, and the call's duration. */
  readonly offsetMs: number;
  readonly durationMs: number;
  /** The subagent this call ran, when the data links one. */
  readonly childAgent: string | null;
  /** A subagent call whose child waits for decisions on its tool calls (no result yet). */
  readonly waiting: boolean /**
   * For a call a crash interrupted: how a person resolved it (run again, recorded as not run, or
   * given its result), or its tool's reconcile (`'reconciled'`); null for any other call.
   */;
  readonly resolution: 'approved' | 'rejected' | 'completed' | 'reconciled' | null;
}
/** A tool call waiting for a person's decision, as `state.pendingApprovals()` lists it. */
interface PendingApprovalView {
  readonly toolCallId: string;
  readonly toolName: string;
  readonly args: string;
  /** The subagents that lead to the call (empty for the agent's own calls). */
  readonly path: readonly string[];
  /** Why it waits: its tool needs approval, or a crash interrupted it (`'interrupted'`). */
  readonly reason: 'approval' | 'interrupted';
}
export interface StepView {
  readonly number: number;
  readonly id: string;
  readonly type: string;
  /** True for a step still in flight (an AgentState taken mid-run). */
  readonly inFlight: boolean;
  /** Milliseconds from the execution's start. */
  readonly offsetMs: number;
  readonly durationMs: number;
  /** The model call within the step; `measured` when timed from the trace, else estimated. */
  readonly model: { readonly offsetMs: number; readonly durationMs: number; readonly measured: boolean };
  readonly finishReason: string | null;
  readonly text: string;
  readonly usage: UsageView;
  readonly tools: readonly ToolView[];
  /** Errors of the step itself (tool errors are on the tools). */
  readonly errors: readonly ErrorView[];
  /** Stop signals raised by the end of this step (new ones only), as `reason: message`. */
  readonly stopSignals: readonly string[];
  /** How the step's prompt was compacted to fit the context window (from the trace), if it was. */
  readonly compaction: string | null;
  /** Input messages as `[from, to)` ranges of RunView.messages; `newFrom` = how many were seen before. */
  readonly input: ReadonlyArray<readonly [number, number]>;
  readonly inputCount: number;
  readonly newFrom: number;
  readonly output: readonly number[];
  /** Where a replay of this run first differed, shown beside this recorded step (`buildRunView(run, { divergence })`). */
  readonly divergence?: DivergenceView;
}
/** A replay's divergence as the viewer shows it: the values as short JSON text. */
export interface DivergenceView {
  readonly kind: 'request' | 'tool-result' | 'outcome';
  readonly path: string;
  readonly recorded: string;
  readonly replayed: string;
}
export interface PathView {
  readonly path: string;
  readonly t: number | null;
}
export interface ActorView {
  readonly actor: string;
  readonly id: string;
  readonly src: string;
  readonly systemId: string | null;
  readonly startMs: number;
  readonly durationMs: number | null;
  readonly status: string;
  readonly agent: string | null;
  readonly children: readonly ActorView[];
}
export interface EventView {
  readonly t: number;
  readonly kind: 'emitted' | 'event';
  readonly type: string;
  readonly summary: string;
}
export interface AgentView {
  /** `a0`, `a1`, ...: the page's key for the agent. */
  readonly key: string;
  readonly agentId: string;
  readonly parentAgentId: string | null;
  readonly parentKey: string | null;
  readonly childKeys: readonly string[];
  readonly depth: number;
  /** The parent's tool call that ran this agent, when known. */
  readonly spawnedBy: { readonly stepNumber: number; readonly toolName: string } | null;
  readonly status: string;
  readonly stopReason: string | null;
  readonly stopMessage: string | null;
  readonly stopSource: string | null;
  readonly executionId: string | null;
  readonly executionCount: number;
  readonly startedAt: string | null;
  readonly durationMs: number | null;
  /** Everything the execution spent, its subagents' runs included. */
  readonly usage: UsageView;
  /** What this agent's own model calls and tools spent, without its subagents' runs: sums of these count each token once. */
  readonly ownUsage: UsageView;
  readonly stepCount: number;
  readonly systemPrompt: string;
  readonly finalResponse: string;
  /** Calls the run waits for decisions on: its own, and those inside its waiting subagents. */
  readonly pendingApprovals: readonly PendingApprovalView[];
  readonly errors: readonly ErrorView[];
  readonly steps: readonly StepView[];
  /** The statechart path (consecutive repeats merged); null without a trace. */
  readonly statePath: readonly PathView[] | null;
  readonly actorTree: ActorView | null;
  readonly events: readonly EventView[] | null;
}
export interface RunView {
  readonly title: string;
  readonly source: 'trace' | 'state';
  readonly startedAt: string | null;
  readonly agents: readonly AgentView[];
  readonly messages: readonly MessageView[];
  /** Things the data could not show: issues the recorder logged, child states that did not decode. */
  readonly notes: readonly string[];
}

export interface AgentSource {
  readonly state: AgentState;
  readonly actor: string | null;
  spawnedBy: { parentId: string; stepNumber: number; toolName: string; toolCallId?: string } | null;
}
