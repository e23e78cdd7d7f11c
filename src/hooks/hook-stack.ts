import { AgentState } from '../state/agent-state';
import { InvalidReturnValueError, kindOf } from '../state/errors';
import type { HookStage } from '../state/hook-stage';
import type { ErrorContext, Hook, HookResult, StageContext } from './hook';

/**
 * Runs the hooks of one stage in order. Stays synchronous as long as every hook answers
 * synchronously, so a stack of plain functions adds no promise turns to a step.
 */
export function runStage(
  hooks: readonly Hook[],
  stage: HookStage,
  state: AgentState,
  context: StageContext | ErrorContext,
): AgentState | Promise<AgentState> {
  let current = state;
  for (let i = 0; i < hooks.length; i++) {
    const hook = hooks[i] as Hook;
    const fn = hook[stage] as
      | ((s: AgentState, c: typeof context) => HookResult | Promise<HookResult>)
      | undefined;
    if (!fn) continue;
    const result = fn.call(hook, current, context);
    if (isPromise(result)) return continueAsync(hooks, stage, i, current, context, result);
    current = checked(result, current, hook, stage);
  }
  return current;
}

async function continueAsync(
  hooks: readonly Hook[],
  stage: HookStage,
  index: number,
  state: AgentState,
  context: StageContext | ErrorContext,
  pending: Promise<HookResult>,
): Promise<AgentState> {
  let current = checked(await pending, state, hooks[index] as Hook, stage);
  const rest = runStage(hooks.slice(index + 1), stage, current, context);
  current = isPromise(rest) ? await rest : rest;
  return current;
}

function checked(result: HookResult, previous: AgentState, hook: Hook, stage: string): AgentState {
  if (result === undefined) return previous;
  if (result instanceof AgentState) return result;
  throw new InvalidReturnValueError(hookName(hook, stage), kindOf(result), 'return an AgentState or nothing');
}

/** A hook as errors name it: `Hook 'audit' (afterStep)`. */
export function hookName(hook: Hook, stage: string): string {
  return `Hook '${hook.name ?? 'anonymous'}' (${stage})`;
}

export function isPromise<T>(value: T | Promise<T>): value is Promise<T> {
  return typeof (value as { then?: unknown })?.then === 'function';
}

/** Hooks that implement `stage`, in order. */
export function hooksFor(hooks: readonly Hook[], stage: keyof Hook): Hook[] {
  return hooks.filter((h) => typeof h[stage] === 'function');
}
