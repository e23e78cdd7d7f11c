import { bindTraceDecoder } from '../replay/replay-driver';
import { AgentState } from '../state/agent-state';
import { InvalidStateError } from '../state/errors';
import { validate } from '../state/validation';
import { isRecord, packedStateRefs, packedStepRefs, unpackState } from './trace-blobs';
import { InvalidTraceError, TRACE_FORMAT, TRACE_VERSION, type Trace, traceSchema } from './trace-schema';

/**
 * Validates a trace (an object, or its JSON text) and returns it typed. Raises InvalidTraceError
 * (`code: 'INVALID_TRACE'`) whose `path` names the first bad field: a schema mismatch, an
 * unsupported version, or a reference to a blob the trace does not hold.
 *
 * @example
 * const trace = readTrace(await readFile('trace.json', 'utf8'));
 * trace.entries.filter((e) => e.kind === 'emitted').map((e) => e.type);
 */
export function readTrace(data: unknown): Trace {
  let trace: Trace;
  try {
    const input = typeof data === 'string' ? parseJson(data) : data;
    if (isRecord(input) && input.format === TRACE_FORMAT && input.version !== TRACE_VERSION) {
      throw new InvalidTraceError(
        'version',
        `unsupported trace version ${JSON.stringify(input.version)} (this library reads version ${TRACE_VERSION})`,
      );
    }
    trace = validate(traceSchema, input, 'trace');
  } catch (error) {
    if (error instanceof InvalidStateError)
      throw new InvalidTraceError(error.path, error.detail, { cause: error });
    throw error;
  }
  checkReferences(trace);
  return trace;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new InvalidTraceError('', `not valid JSON (truncated or corrupt): ${(error as Error).message}`, {
      cause: error,
    });
  }
}

function checkReferences(trace: Trace): void {
  const has = (hash: string) => Object.hasOwn(trace.blobs, hash);
  const need = (hash: string, path: string) => {
    if (!has(hash)) throw new InvalidTraceError(path, `refers to blob ${hash}, which is not in blobs`);
  };
  const states = new Set<string>();
  trace.entries.forEach((entry, i) => {
    if ((entry.kind === 'event' || entry.kind === 'emitted') && entry.payloadBlob !== undefined)
      need(entry.payloadBlob, `entries[${i}].payloadBlob`);
    if (entry.kind === 'state') {
      need(entry.state, `entries[${i}].state`);
      states.add(entry.state);
    }
  });
  trace.agents.forEach((agent, i) => {
    need(agent.state, `agents[${i}].state`);
    states.add(agent.state);
  });
  const steps = new Set<string>();
  for (const hash of states) {
    for (const ref of packedStateRefs(trace.blobs[hash], `blobs.${hash}`)) {
      need(ref.hash, ref.path);
      if (ref.path.includes('.stepExecutions[')) steps.add(ref.hash);
    }
  }
  for (const hash of steps)
    for (const ref of packedStepRefs(trace.blobs[hash], `blobs.${hash}`)) need(ref.hash, ref.path);
}

/** One agent of a trace with its last state. */
export interface TracedAgent {
  /** The actor that ran it (`x:0`), or null for a state added with `recorder.addState()`. */
  readonly actor: string | null;
  readonly agentId: string;
  readonly parentAgentId: string | null;
  readonly state: AgentState;
}

/**
 * The last AgentState of every agent in a trace, in the order the recorder first saw them.
 * Raises InvalidTraceError (its path starting at `agents[i].state`) if a state does not decode.
 *
 * @example
 * const [root] = traceStates(readTrace(json));
 * root.state.stopReason(); // 'completed'
 */
export function traceStates(trace: Trace): TracedAgent[] {
  return trace.agents.map((agent, i) => ({
    actor: agent.actor,
    agentId: agent.agentId,
    parentAgentId: agent.parentAgentId,
    state: decodeTracedState(trace, agent.state, `agents[${i}].state`),
  }));
}

/**
 * Decodes the AgentState stored under `hash` (an `agents[i].state` or a `state` entry's `state`).
 *
 * @example
 * const checkpoints = trace.entries.filter((e) => e.kind === 'state');
 * const first = decodeTracedState(trace, checkpoints[0].state);
 */
export function decodeTracedState(trace: Trace, hash: string, path = 'state'): AgentState {
  const json = unpackState(trace.blobs, hash, path);
  try {
    return AgentState.fromJSON(json);
  } catch (error) {
    if (error instanceof InvalidStateError)
      throw new InvalidTraceError(
        `${path} (blobs.${hash})${error.path ? `.${error.path}` : ''}`,
        error.detail,
        {
          cause: error,
        },
      );
    throw error;
  }
}

/** The state a replay answers from (`replayDriver(trace)`, `agent.replay(trace)`): the trace's root agent's. */
bindTraceDecoder((data) => {
  const agents = traceStates(readTrace(data));
  const root = agents.find((agent) => agent.parentAgentId === null) ?? agents[0];
  if (!root) throw new InvalidTraceError('agents', 'the trace holds no agent state to replay');
  return root.state;
});
