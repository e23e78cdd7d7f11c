/**
 * What every side-by-side adapter shares: the adapter shape, the script the fake models play and
 * the counters that prove a run made the calls it should have.
 *
 * The script is stateless, so one agent (or graph) per N serves sequential and concurrent runs
 * alike, as `libraryAgent(N)` does: step k (0-based) asks for `echo({ n: k })` with call id
 * `call-k` while k < N - 1, and answers the text `done` on step N - 1. A model learns k from the
 * last message of its prompt: the user's question means step 0, the result of call `call-k` means
 * step k + 1. Every library keeps tool call ids, so the decision is O(1) and needs no per-run state.
 */
import { readFileSync } from 'node:fs';

export const FINAL_TEXT = 'done';
export const QUESTION = 'go';

const callId = (step: number) => `call-${step}`;

/** The step a model is at, from the id of the last tool result in its prompt (none: step 0). */
export function stepAfter(lastToolCallId: string | undefined): number {
  if (lastToolCallId === undefined) return 0;
  const k = Number(lastToolCallId.slice('call-'.length));
  if (!lastToolCallId.startsWith('call-') || !Number.isInteger(k)) {
    throw new Error(`unexpected tool call id in the prompt: ${lastToolCallId}`);
  }
  return k + 1;
}

/** What the model answers at step k of an N-step run. */
export type ScriptAnswer = { kind: 'tool'; id: string; n: number } | { kind: 'text'; text: string };
export function answerAt(step: number, steps: number): ScriptAnswer {
  if (step >= steps) throw new Error(`the model was called for step ${step + 1} of a ${steps}-step script`);
  return step < steps - 1 ? { kind: 'tool', id: callId(step), n: step } : { kind: 'text', text: FINAL_TEXT };
}

/** Model and tool calls an adapter made, counted inside its fake model and its tool. */
export interface Counters {
  modelCalls: number;
  toolCalls: number;
}

export interface Workload {
  /** One run of N steps; resolves with the library's own result and throws if the run is short. */
  run(): Promise<unknown>;
}

export interface Adapter {
  readonly name: string;
  /** Package and version measured. */
  readonly version: string;
  readonly counters: Counters;
  /** False for a row whose result is a stub, not an agent's state: its heap columns stay empty. */
  readonly heap?: false;
  /** Builds what runs of `steps` steps need (agent, graph, model), once per N. */
  setup(steps: number): Promise<Workload> | Workload;
}

/** Throws unless a run's own record shows `steps` model calls, `steps - 1` tool calls and the answer. */
export function expectRun(
  adapter: string,
  steps: number,
  got: { modelCalls: number; toolCalls: number; text: unknown },
): void {
  if (got.modelCalls !== steps || got.toolCalls !== steps - 1 || got.text !== FINAL_TEXT) {
    throw new Error(
      `${adapter}: a ${steps}-step run made ${got.modelCalls} model calls and ${got.toolCalls} tool calls ` +
        `and answered ${JSON.stringify(got.text)} (expected ${steps}, ${steps - 1}, "${FINAL_TEXT}")`,
    );
  }
}

/** The installed version of a package, read from node_modules. */
export function versionOf(pkg: string): string {
  const file = new URL(`../../node_modules/${pkg}/package.json`, import.meta.url);
  return `${pkg}@${(JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version}`;
}
