import type { AgentContext } from './agent-context';
import type { ExecutionState } from './execution-state';

// The fields of an AgentState, in a file of their own so that the state's codec (serialization.ts),
// which agent-state.ts imports, can name them without importing agent-state.ts back.

/** Per-agent model settings that override the driver's defaults (model id, temperature, ...). */
export type LlmConfig = Readonly<Record<string, unknown>>;

export interface AgentStateProps {
  readonly agentId: string;
  readonly parentAgentId: string | null;
  readonly createdAt: number;
  readonly updatedAt: number;
  readonly executionCount: number;
  readonly llmConfig: LlmConfig | null;
  readonly context: AgentContext;
  readonly execution: ExecutionState | null;
  /** The version of the agent that last saved the state (`AgentDefinition.version`); absent: none. */
  readonly agentVersion?: string | null;
}
