import { AgentState } from '../state/agent-state';
import { InvalidReturnValueError, kindOf } from '../state/errors';
import { ToolExecution } from '../state/tool-execution';
import type { Hook, ToolUseDecision } from './hook';
import { hookName } from './hook-stack';

/**
 * What a beforeToolUse hook answered, checked: nothing, a state, or a decision whose `block` is text
 * and whose `state` is an AgentState. Anything else raises InvalidReturnValueError (a block reason
 * that is not text would be recorded as the call's error message, and the session would not load).
 */
export function checkedToolUseDecision(
  decision: unknown,
  hook: Hook,
): AgentState | ToolUseDecision | undefined {
  if (decision === undefined || decision instanceof AgentState) return decision;
  const who = hookName(hook, 'beforeToolUse');
  if (typeof decision !== 'object' || decision === null || Array.isArray(decision))
    throw new InvalidReturnValueError(
      who,
      kindOf(decision),
      'return nothing, an AgentState or { block, args, state }',
    );
  const { block, state } = decision as ToolUseDecision;
  if (block !== undefined && typeof block !== 'string')
    throw new InvalidReturnValueError(
      who,
      `block: ${kindOf(block)}`,
      'block takes the reason the model is told, a string',
    );
  if (state !== undefined && !(state instanceof AgentState))
    throw new InvalidReturnValueError(who, `state: ${kindOf(state)}`, 'state takes an AgentState');
  return decision as ToolUseDecision;
}

/** What an afterToolUse hook answered, checked: nothing, a state, or the call's ToolExecution. */
export function checkedToolResult(result: unknown, hook: Hook): AgentState | ToolExecution | undefined {
  if (result === undefined || result instanceof AgentState || result instanceof ToolExecution) return result;
  throw new InvalidReturnValueError(
    hookName(hook, 'afterToolUse'),
    kindOf(result),
    'return nothing, an AgentState or a ToolExecution',
  );
}
