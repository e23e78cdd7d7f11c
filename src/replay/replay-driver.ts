import type { Driver, DriverContext } from '../drivers/driver';
import {
  conversationWithCurrentToolTrace,
  currentToolTraceList,
  type MessageCompiler,
} from '../drivers/message-compiler';
import { digestOf, stepRequest } from '../drivers/request-digest';
import { SCRIPT_CURSOR_KEY } from '../drivers/scripted-driver';
import { AgentState } from '../state/agent-state';
import { AgentStep } from '../state/agent-step';
import { AppendOnlyList } from '../state/append-only-list';
import { InvalidArgumentError } from '../state/errors';
import { firstDifference } from '../state/json-difference';
import type { Message } from '../state/message';
import {
  type ReplayDivergence,
  ReplayDivergenceError,
  ReplaySession,
  type ReplayTrack,
} from './replay-tracks';

export type { ReplayDivergence } from './replay-tracks';
export { ReplayDivergenceError } from './replay-tracks';

/** A recorded run: a saved AgentState (a session), or a trace written by `recordTrace()`. */
export type Recording = AgentState | { readonly format: 'agent-machine/trace' };

export interface ReplayDriverOptions {
  /** The message compiler the recorded run used (the model driver's `compileMessages`), if not the default. */
  readonly compileMessages?: MessageCompiler;
  /** @internal the replay this driver answers for (shared by a tree of agents) */
  readonly session?: ReplaySession;
  /** @internal the driver that answers the steps the recording does not (after `fromStep`) */
  readonly live?: Driver;
}

let traceDecoder: ((trace: unknown) => AgentState) | null = null;

/** @internal the trace reader (in `inspect/`) registers how a trace yields its root state */
export function bindTraceDecoder(decode: (trace: unknown) => AgentState): void {
  traceDecoder = decode;
}

/** The root AgentState of a recording; raises InvalidArgumentError for anything else. */
export function recordedState(recorded: Recording, what = 'replay(recorded)'): AgentState {
  if (recorded instanceof AgentState) return recorded;
  if ((recorded as { format?: unknown } | null)?.format === 'agent-machine/trace' && traceDecoder)
    return traceDecoder(recorded);
  throw new InvalidArgumentError(
    what,
    'pass an AgentState (a saved session: (await store.load(id)).state) or a trace from readTrace(json)',
  );
}

/**
 * A driver that answers each step with the recorded answer (output messages, inference response:
 * text, tool calls, finish reason, usage, provider metadata), with no network. It checks first
 * that the step asks what the recorded one asked: the same input messages, and (for steps the
 * model driver recorded) the same system prompt, tools and settings. A step that asks something
 * else, or a step the recording does not have, throws ReplayDivergenceError (REPLAY_DIVERGED),
 * which fails the run. Subagents inheriting the driver answer from their own recordings.
 *
 * @example
 * const saved = (await store.load('chat-42'))!.state;
 * const agent = createAgent({ driver: replayDriver(saved), tools });
 * // or, comparing the whole run: await createAgent({ model, tools }).replay(saved)
 */
export function replayDriver(recorded: Recording, options: ReplayDriverOptions = {}): Driver {
  const session = options.session ?? new ReplaySession(recordedState(recorded, 'replayDriver(recorded)'));
  return sessionReplayDriver(() => session, options);
}

/**
 * @internal The replay driver of a replay agent kept for the next replay: `current` gives the
 * replay each model call answers for (read as it starts).
 */
export function sessionReplayDriver(
  current: () => ReplaySession,
  options: Omit<ReplayDriverOptions, 'session'>,
): Driver {
  const compile = options.compileMessages ?? conversationWithCurrentToolTrace;
  return {
    name: 'replay',
    async infer(state, context) {
      const session = current();
      const track = session.trackOf(state);
      const stepNumber = state.stepCount() + 1;
      if (track.root) session.rootStep = stepNumber;
      if (track.live || (track.root && session.isLiveStep(stepNumber))) {
        if (!options.live)
          throw new InvalidArgumentError('replay', 'no live driver for the steps after the fork');
        return options.live.infer(state, context);
      }
      const recordedStep = track.steps[stepNumber - 1];
      // a message steered in while this step ran in the recording (it joined the next step)
      session.steerDuring(state, stepNumber);
      if (!recordedStep && track.root && session.unfinished) {
        // the recording ends here (a run saved in progress): so does the replay
        session.endOfRecording();
        return untilAborted(context.signal);
      }
      // a person stopped the recorded run while this step's model call was in flight: so does the replay
      if (session.stopsHere(state, 'inference', !recordedStep)) return untilAborted(context.signal);
      // the model call of the recording's last step asked the run to stop (an AgentStopError)
      const stop = !recordedStep && stepNumber === track.steps.length + 1 && session.recordedStop(state);
      if (stop) throw stop;
      if (!recordedStep) {
        diverged(track, {
          stepNumber,
          kind: 'outcome',
          path: 'stepCount',
          recorded: track.steps.length,
          replayed: stepNumber,
        });
      }
      // a model call that failed fails again, with the recorded error (a plain record, kept as it is)
      const failure = recordedStep.outputMessages().length === 0 && recordedStep.stepErrors()[0];
      if (failure) throw failure;
      const input =
        (compile === conversationWithCurrentToolTrace && currentToolTraceList(state)) || compile(state);
      const difference =
        inputDifference(track, recordedStep, input) ??
        (await requestDifference(track, recordedStep, state, context));
      if (difference) diverged(track, { stepNumber, kind: 'request', ...difference });
      return scriptPosition(state, track, stepNumber).withCurrentStep(
        AgentStep.of({
          id: recordedStep.id(),
          inputMessages: input,
          outputMessages: modelOutput(recordedStep),
          inferenceResponse: recordedStep.inferenceResponse(),
          request: recordedStep.request(),
        }),
      );
    },
  };
}

/** A call that waits for the run to stop it. */
export function untilAborted(signal: AbortSignal): Promise<never> {
  return new Promise<never>((_, reject) => {
    if (signal.aborted) reject(signal.reason);
    else signal.addEventListener('abort', () => reject(signal.reason), { once: true });
  });
}

/**
 * A recording of the scripted driver keeps its position in the state's metadata: the replay
 * moves it as the scripted driver did, so that the replayed state equals the recorded one.
 */
function scriptPosition(state: AgentState, track: ReplayTrack, stepNumber: number): AgentState {
  const end = track.recorded.metadata()[SCRIPT_CURSOR_KEY];
  if (typeof end !== 'number') return state;
  return state.withMetadata(SCRIPT_CURSOR_KEY, end - track.steps.length + stepNumber);
}

function diverged(track: ReplayTrack, divergence: ReplayDivergence): never {
  track.divergence ??= divergence;
  throw new ReplayDivergenceError(divergence);
}

/** The step's messages from the model: its output without the tool results the tool stage appended. */
function modelOutput(step: AgentStep): readonly Message[] {
  const output = step.outputMessages();
  return output.some(isToolResult) ? output.filter((m) => !isToolResult(m)) : output;
}

const isToolResult = (m: Message) => m.role === 'tool' && m.metadata.tool_execution_id !== undefined;

/**
 * The first difference between the recorded step's input messages and these. A step's input
 * extends the last one's (the conversation grows): only the messages added since are compared.
 */
function inputDifference(
  track: ReplayTrack,
  step: AgentStep,
  input: readonly Message[] | AppendOnlyList<Message>,
): { path: string; recorded: unknown; replayed: unknown } | null {
  const replayed = input instanceof AppendOnlyList ? input : AppendOnlyList.of(input);
  const recorded = step.inputMessageList();
  const checked = track.checked;
  const from =
    checked?.replayed.isPrefixOf(replayed) && checked.recorded.isPrefixOf(recorded)
      ? checked.replayed.size
      : 0;
  const shared = Math.min(recorded.size, replayed.size);
  for (let i = from; i < shared; i++) {
    const a = recorded.at(i);
    const b = replayed.at(i);
    if (a === b) continue;
    const found = firstDifference(a, b, `inputMessages[${i}]`);
    if (found) return found;
  }
  if (recorded.size !== replayed.size)
    return { path: 'inputMessages.length', recorded: recorded.size, replayed: replayed.size };
  track.checked = { replayed, recorded };
  return null;
}

async function requestDifference(
  track: ReplayTrack,
  step: AgentStep,
  state: AgentState,
  context: DriverContext,
): Promise<{ path: string; recorded: unknown; replayed: unknown } | null> {
  const recorded = step.request();
  const system = state.systemPrompt();
  // the recording's system prompt as text: the one its state holds, if the step was sent it
  const recordedSystem = track.recorded.systemPrompt();
  if (!recorded)
    return system === recordedSystem
      ? null
      : { path: 'request.system', recorded: recordedSystem, replayed: system };
  const replayed = await stepRequest(state, context.tools);
  for (const key of ['system', 'tools', 'settings'] as const) {
    if (recorded[key] === replayed[key]) continue;
    if (key === 'system')
      return {
        path: 'request.system',
        recorded: digestOf(recordedSystem) === recorded.system ? recordedSystem : `digest ${recorded.system}`,
        replayed: system,
      };
    return {
      path: `request.${key}`,
      recorded: `digest ${recorded[key]}`,
      replayed: `digest ${replayed[key]}`,
    };
  }
  return null;
}
