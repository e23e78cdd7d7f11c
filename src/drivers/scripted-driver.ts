import type { AgentState } from '../state/agent-state';
import { AgentStep, InferenceResponse } from '../state/agent-step';
import { InvalidArgumentError } from '../state/errors';
import { newId } from '../state/ids';
import { Message, type ToolCall } from '../state/message';
import { Usage } from '../state/usage';
import { abortableDelay } from './abortable-delay';
import type { Driver } from './driver';

/** One scripted model answer. */
export interface ScriptStep {
  readonly text?: string;
  readonly toolCalls?: ReadonlyArray<{
    readonly name: string;
    readonly args?: unknown;
    readonly id?: string;
  }>;
  readonly usage?: Partial<Usage>;
  readonly finishReason?: string;
  /** Throw this instead of answering (a failing model call). */
  readonly error?: unknown;
  /** Wait this long first (honours the abort signal). */
  readonly delayMs?: number;
}

export type ScriptEntry = ScriptStep | ((state: AgentState) => ScriptStep);

export const SCRIPT_CURSOR_KEY = 'scriptedDriver.cursor';

/**
 * A deterministic driver that plays a list of model answers, one per step, for tests and demos.
 * Its position is kept in the state's metadata (`scriptedDriver.cursor`), so it survives
 * serialization and continues across executions of a session. When the script runs out, the last
 * entry repeats.
 *
 * @example
 * scriptedDriver([{ toolCalls: [{ name: 'add', args: { a: 2, b: 3 } }] }, { text: '5' }]);
 */
export function scriptedDriver(script: readonly ScriptEntry[], options: { name?: string } = {}): Driver {
  if (script.length === 0)
    throw new InvalidArgumentError('scriptedDriver(script)', 'the script is empty; give at least one entry');
  return {
    name: options.name ?? 'scripted',
    infer(state, context) {
      const cursor = Number(state.metadata()[SCRIPT_CURSOR_KEY] ?? 0);
      const entry = script[Math.min(cursor, script.length - 1)] as ScriptEntry;
      const step = typeof entry === 'function' ? entry(state) : entry;
      const answer = () => scriptedAnswer(state.withMetadata(SCRIPT_CURSOR_KEY, cursor + 1), step);
      if (!step.delayMs) return answer();
      return abortableDelay(step.delayMs, context.signal).then(answer);
    },
  };
}

function scriptedAnswer(state: AgentState, step: ScriptStep): AgentState {
  if (step.error !== undefined)
    throw step.error instanceof Error ? step.error : new Error(String(step.error));
  const toolCalls: ToolCall[] = (step.toolCalls ?? []).map((c) =>
    Object.freeze({ id: c.id ?? `call_${newId().slice(0, 8)}`, name: c.name, args: c.args ?? {} }),
  );
  const text = step.text ?? '';
  const usage = Usage.of(step.usage ?? {});
  return state.withCurrentStep(
    AgentStep.of({
      inputMessages: state.messageList(),
      outputMessages: [Message.assistant(text, toolCalls)],
      inferenceResponse: InferenceResponse.of({
        text,
        toolCalls,
        finishReason: step.finishReason ?? (toolCalls.length ? 'tool-calls' : 'stop'),
        usage,
      }),
    }),
  );
}
