import { AgentMachineError } from './errors';
import type { AgentStateJSON } from './schemas';

// The one recursive edge of the state's data: a tool call that ran a subagent keeps the child's
// final AgentState, an approval keeps the states of its waiting children, a SubagentFailedError the
// child that failed. Those parts lie below agent-state.ts (it imports them), so importing AgentState
// back would close an import circle. They name the child's type and decode it through this file
// instead, and agent-state.ts binds both: the type by declaration merging (the `Register` pattern of
// XState and TanStack Router), the decoder when it loads.

/** Filled by agent-state.ts: `agentState` is the AgentState class. @lintignore exported for that merging */
// biome-ignore lint/suspicious/noEmptyInterface: declaration merging in agent-state.ts gives it its member
export interface NestedStateTypes {}

/** AgentState, as a part below agent-state.ts names a child's state. */
export type NestedAgentState = NestedStateTypes extends { agentState: infer S } ? S : never;

type NestedStateDecoder = (json: AgentStateJSON) => NestedAgentState;

let decoder: NestedStateDecoder | null = null;

/** Called once by agent-state.ts: how a child's state is built from its validated document. */
export function bindNestedStateDecoder(decode: NestedStateDecoder): void {
  decoder = decode;
}

/** A child's state from its document, already validated with the part that holds it. */
export function decodeNestedState(json: AgentStateJSON): NestedAgentState {
  if (decoder === null) {
    // Only a program that loads a part's module without agent-state.ts can get here; the package's
    // entry loads both.
    throw new AgentMachineError(
      'STATE_DECODER_UNBOUND',
      'A subagent state cannot be decoded before src/state/agent-state.ts is loaded: import AgentState (or the package entry) first.',
    );
  }
  return decoder(json);
}
