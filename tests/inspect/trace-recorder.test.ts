import { createHash } from 'node:crypto';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { scriptedDriver } from '../../src/drivers/scripted-driver';
import type { Hook } from '../../src/hooks/hook';
import { buildRunView } from '../../src/inspect/run-model';
import { unpackState } from '../../src/inspect/trace-blobs';
import { decodeTracedState, readTrace, traceStates } from '../../src/inspect/trace-reader';
import { recordTrace } from '../../src/inspect/trace-recorder';
import {
  InvalidTraceError,
  TRACE_FORMAT,
  TRACE_VERSION,
  type Trace,
  type TraceEntryOf,
  traceSchema,
} from '../../src/inspect/trace-schema';
import { InMemorySessionStore } from '../../src/persistence/in-memory-session-store';
import { createAgent } from '../../src/runtime/create-agent';
import { AgentState } from '../../src/state/agent-state';
import { canonicalJson, contentHash, sha256Base64, sha256Portable } from '../../src/state/content-hash';
import { ExecutionStatus } from '../../src/state/execution-status';
import { StopReason } from '../../src/state/stop-reason';
import { waitForState } from '../support/agents';
import { question, recordedRun, TOOL_ERROR, weatherAgent } from './support';

const ofKind = <K extends Trace['entries'][number]['kind']>(trace: Trace, kind: K) =>
  trace.entries.filter((e): e is TraceEntryOf<K> => e.kind === kind);

/** `expected` appears in `actual` in order, possibly with other items in between. */
function expectSubsequence(actual: readonly string[], expected: readonly string[]): void {
  let at = 0;
  for (const item of actual) if (item === expected[at]) at++;
  expect(
    at,
    `${expected[at]} (item ${at} of the expected path) is missing or out of order in:\n${actual.join('\n')}`,
  ).toBe(expected.length);
}

const LOOP_EVENTS = [
  'execution.started',
  'step.started',
  'tool.started',
  'tool.finished',
  'step.finished',
  'continuation.evaluated',
  'step.started',
  'tool.started',
  'tool.started',
  'tool.finished',
  'tool.finished',
  'step.finished',
  'continuation.evaluated',
  'step.started',
  'step.finished',
  'continuation.evaluated',
  'execution.finished',
];

describe('recordTrace', () => {
  it('records a run: a valid, versioned trace that survives JSON', async () => {
    const { state, recorder } = await recordedRun();
    expect(state.status()).toBe(ExecutionStatus.Completed);
    const trace = recorder.trace();
    expect(trace.format).toBe(TRACE_FORMAT);
    expect(trace.version).toBe(TRACE_VERSION);
    expect(trace.title).toBe('Weather comparison');
    expect(traceSchema.safeParse(trace).success).toBe(true);
    // Through JSON text and back, as a file would be.
    expect(readTrace(JSON.stringify(trace))).toEqual(trace);
    expect(readTrace(JSON.stringify(recorder)).entries).toEqual(trace.entries);
  });

  it('records the actor tree: the agent and the workers it invoked', async () => {
    const { state, recorder } = await recordedRun();
    const trace = recorder.trace();
    const { actors } = trace;
    const root = actors.find((a) => a.parent === null);
    expect(root).toMatchObject({ src: 'agent', agentId: state.agentId(), parent: null });
    // The step's workers, invoked once per execution (no hooks worker: the agent has no hooks).
    const children = actors.filter((a) => a.parent === root?.actor);
    expect(children.map((a) => a.id)).toEqual(['driver', 'toolExecutor']);
    expect(children.map((a) => a.src)).toEqual(children.map((a) => a.id));
    expect(new Set(actors.map((a) => a.actor)).size).toBe(actors.length);
    // Each step sends them `work` (3 model calls, 2 tool steps); both end with the step cycle.
    const requests = (id: string) =>
      ofKind(trace, 'event').filter((e) => e.actor === children.find((c) => c.id === id)?.actor);
    expect(requests('driver').map((e) => e.type)).toEqual(['xstate.init', 'work', 'work', 'work']);
    expect(requests('toolExecutor').map((e) => e.type)).toEqual(['xstate.init', 'work', 'work']);
    const ended = (id: string) =>
      ofKind(trace, 'snapshot').find(
        (e) => e.status === 'stopped' && e.actor === children.find((c) => c.id === id)?.actor,
      );
    expect(ended('driver')).toBeDefined();
    expect(ended('toolExecutor')).toBeDefined();
  });

  it('records the hooks worker of an agent with hooks: one per execution, a request per stage', async () => {
    const recorder = recordTrace();
    const hooks: Hook[] = [{ beforeStep: () => undefined, afterExecution: async () => undefined }];
    const agent = createAgent({ driver: scriptedDriver([{ text: 'hi' }]), hooks });
    await agent.execute(question(), { inspect: recorder.inspect });
    await agent.execute(question(), { inspect: recorder.inspect });
    const trace = recorder.trace();
    const workers = trace.actors.filter((a) => a.id === 'hooks');
    expect(workers).toHaveLength(2);
    for (const worker of workers) {
      const received = ofKind(trace, 'event').filter((e) => e.actor === worker.actor);
      // beforeStep and afterExecution; each answered, the stage's exit cancel finding nothing in flight
      expect(received.map((e) => e.type)).toEqual(['xstate.init', 'work', 'cancel', 'work', 'cancel']);
      expect(received.filter((e) => e.type === 'work').map((e) => e.payload)).toEqual([
        { stage: 'beforeStep', error: null },
        { stage: 'afterExecution', error: null },
      ]);
    }
  });

  it('times each model call from the driver request to its answer', async () => {
    const { recorder } = await recordedRun();
    const [agent] = buildRunView(recorder.trace()).agents;
    // weatherAgent's model calls wait 15, 10 and 8 ms (timers may fire up to 1 ms early)
    expect(agent?.steps.map((s) => s.model.measured)).toEqual([true, true, true]);
    const durations = agent?.steps.map((s) => s.model.durationMs) ?? [];
    expect(durations.map((d, i) => d >= [14, 9, 7][i]!)).toEqual([true, true, true]);
  });

  it('records the state path from pending through inProgress to completed', async () => {
    const { recorder } = await recordedRun();
    const trace = recorder.trace();
    const root = trace.actors.find((a) => a.parent === null)?.actor;
    const snapshots = ofKind(trace, 'snapshot').filter((e) => e.actor === root && e.path);
    const macro = snapshots.map((e) => e.path?.join('|'));
    expect(macro[0]).toBe('pending');
    expect(macro).toContain('inProgress.step.inference');
    expect(macro).toContain('inProgress.step.tools');
    expect(macro.filter((p) => p === 'completed').length).toBeGreaterThan(0);
    const firstCompleted = macro.indexOf('completed');
    expect(macro.slice(1, firstCompleted).every((p) => p?.startsWith('inProgress.'))).toBe(true);

    // Microsteps add the eventless states, in the chart's order for each step.
    const micro = ofKind(trace, 'microstep')
      .filter((e) => e.actor === root)
      .map((e) => e.path.join('|'));
    const step = [
      'inProgress.step.beforeStep.checkHooks',
      'inProgress.step.inference',
      'inProgress.step.tools',
      'inProgress.step.record',
    ];
    const finalStep = step.filter((p) => p !== 'inProgress.step.tools');
    // In this order (the chart may pass other states in between, e.g. checkpointing to a store).
    expectSubsequence(micro, [...step, ...step, ...finalStep, 'inProgress.finalizing.checkStore']);
    // without beforeExecution or afterExecution hooks the run never enters those stages
    expect(micro.filter((p) => /^inProgress\.(before|after)Execution/.test(p))).toEqual([]);
    expect(micro.filter((p) => p === 'inProgress.step.inference')).toHaveLength(3);
    expect(micro.filter((p) => p === 'inProgress.step.tools')).toHaveLength(2);
    // without hooks or a store a step passes no other state (no afterStep, checkpoint or decide)
    expect(micro.filter((p) => p.startsWith('inProgress.step.'))).toHaveLength(11);
    expect(micro.at(-1)).toBe('completed');
  });

  it('records the beforeExecution and afterExecution stages of an agent with hooks for them', async () => {
    const recorder = recordTrace();
    const hooks: Hook[] = [{ beforeExecution: () => undefined, afterExecution: () => undefined }];
    const agent = createAgent({ driver: scriptedDriver([{ text: 'hi' }]), hooks });
    await agent.execute(question(), { inspect: recorder.inspect });
    const trace = recorder.trace();
    const root = trace.actors.find((a) => a.parent === null)?.actor;
    const micro = ofKind(trace, 'microstep')
      .filter((e) => e.actor === root)
      .map((e) => e.path.join('|'));
    expectSubsequence(micro, [
      'inProgress.beforeExecution.checkHooks',
      'inProgress.beforeExecution.runHooks',
      'inProgress.step.beforeStep.checkHooks',
      'inProgress.step.record',
      'inProgress.afterExecution.checkHooks',
      'inProgress.afterExecution.runHooks',
      'inProgress.finalizing.checkStore',
      'completed',
    ]);
  });

  it('records the library events in order, with their payloads', async () => {
    const { state, recorder } = await recordedRun();
    const trace = recorder.trace();
    const emitted = ofKind(trace, 'emitted');
    expect(emitted.map((e) => e.type)).toEqual(LOOP_EVENTS);
    expect(emitted.every((e) => e.agentId === state.agentId())).toBe(true);
    const failed = emitted.find(
      (e) => e.type === 'tool.finished' && (e.payload as { ok: boolean } | undefined)?.ok === false,
    );
    expect(failed?.payload).toMatchObject({
      toolName: 'forecast',
      stepNumber: 2,
      error: { message: TOOL_ERROR },
    });
    expect(emitted.at(-1)?.payload).toMatchObject({
      status: 'completed',
      stopReason: 'completed',
      stepCount: 3,
    });

    // Timestamps: one sequence over actors and entries, time never going back.
    const seqs = trace.entries.map((e) => e.seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    const times = trace.entries.map((e) => e.t);
    expect(times).toEqual([...times].sort((a, b) => a - b));
    // The events the agent received: execute from outside, answers from its step workers.
    const received = ofKind(trace, 'event').filter((e) => e.actor === trace.actors[0]?.actor);
    expect(received.map((e) => e.type)).toContain('execute');
    const driver = trace.actors.find((a) => a.id === 'driver')?.actor;
    expect(received.filter((e) => e.type === 'driver.done').map((e) => e.source)).toEqual(
      Array(3).fill(driver),
    );
    // Requests and answers carry the whole state (and as token the state the request was made
    // with): the trace leaves states out (they are checkpoints).
    const work = ofKind(trace, 'event').filter((e) => e.type === 'work' || e.type.endsWith('.done'));
    expect(work.length).toBeGreaterThanOrEqual(10);
    expect(work.every((e) => e.payload === undefined && e.payloadBlob === undefined)).toBe(true);
  });

  it("records a failed model call's error with the driver's answer", async () => {
    const recorder = recordTrace();
    const agent = createAgent({ driver: scriptedDriver([{ error: new Error('model overloaded') }]) });
    const state = await agent.execute(question(), { inspect: recorder.inspect });
    expect(state.status()).toBe(ExecutionStatus.Failed);
    const answer = ofKind(recorder.trace(), 'event').find((e) => e.type === 'driver.error');
    expect(answer?.payload).toEqual({ error: { name: 'Error', message: 'model overloaded' } });
  });

  it("records a failed save's error with the checkpoint worker's answer", async () => {
    const recorder = recordTrace();
    // the run's first save (execute's, before the actor runs) succeeds; the step's fails
    class FullDisk extends InMemorySessionStore {
      override async save(id: string, state: AgentState, expected: number | null): Promise<number> {
        if (expected !== null) throw new Error('disk full');
        return super.save(id, state, expected);
      }
    }
    const agent = createAgent({ driver: scriptedDriver([{ text: 'hi' }]), store: new FullDisk() });
    const state = await agent.execute(question(), { sessionId: 'full', inspect: recorder.inspect });
    expect(state.status()).toBe(ExecutionStatus.Failed);
    const answer = ofKind(recorder.trace(), 'event').find((e) => e.type === 'checkpoint.error');
    expect(answer?.payload).toEqual({ error: { name: 'Error', message: 'disk full' } });
  });

  it('stores the final AgentState, equal to the one execute() returned', async () => {
    const { state, recorder } = await recordedRun();
    const trace = recorder.trace();
    expect(trace.agents).toHaveLength(1);
    const [agent] = traceStates(trace);
    expect(agent?.agentId).toBe(state.agentId());
    expect(agent?.state.toJSON()).toEqual(state.toJSON());
    expect(agent?.state.stopReason()).toBe(StopReason.Completed);
    const checkpoints = ofKind(trace, 'state');
    expect(checkpoints.map((c) => c.reason)).toEqual(['execution.finished']);
    expect(unpackState(trace.blobs, checkpoints[0]?.state as string)).toEqual(
      JSON.parse(JSON.stringify(state)),
    );
  });

  it('stores each message once: the same message in several states is one blob', async () => {
    const { state, recorder } = await recordedRun({ checkpoints: 'step' });
    const trace = recorder.trace();
    const checkpoints = ofKind(trace, 'state');
    // The last step ends the execution in the same macrostep: its checkpoint is the execution's.
    expect(checkpoints.map((c) => c.reason)).toEqual([
      'step.finished',
      'step.finished',
      'execution.finished',
    ]);
    const userMessage = state.messages()[0];
    expect(userMessage?.content).toBe('Which is warmer, Paris or Oslo?');
    const hash = contentHash(canonicalJson(userMessage));
    // Every checkpoint holds the question ...
    for (const checkpoint of checkpoints) {
      const packed = trace.blobs[checkpoint.state] as { context: { messages: { messages: unknown[] } } };
      expect(packed.context.messages.messages[0]).toEqual({ $blob: hash });
      expect(decodeTracedState(trace, checkpoint.state).messages()[0]).toEqual(userMessage);
    }
    // ... and the table has it once.
    const copies = Object.values(trace.blobs).filter(
      (blob) => canonicalJson(blob) === canonicalJson(userMessage),
    );
    expect(copies).toHaveLength(1);
    // Steps recorded in earlier checkpoints are shared too: 3 steps, 3 step blobs.
    const stepBlobs = Object.values(trace.blobs).filter(
      (blob) => typeof blob === 'object' && blob !== null && 'continuation' in blob && 'step' in blob,
    );
    expect(stepBlobs).toHaveLength(3);
  });

  it('shares messages between the executions of a session', async () => {
    const recorder = recordTrace();
    const actor = weatherAgent().createActor(AgentState.empty(), { inspect: recorder.inspect });
    actor.subscribe({ error: (error) => expect.fail(String(error)) });
    actor.start();
    actor.send({ type: 'user.message', text: 'Which is warmer, Paris or Oslo?' });
    await waitForState(actor, (s) => s.value === 'completed');
    actor.send({ type: 'user.message', text: 'And tomorrow?' });
    await waitForState(actor, (s) => s.value === 'completed' && s.context.state.executionCount() === 2);
    actor.stop();
    const trace = recorder.trace();
    const finished = ofKind(trace, 'state').filter((c) => c.reason === 'execution.finished');
    expect(finished).toHaveLength(2);
    const [first, second] = finished.map((c) => decodeTracedState(trace, c.state));
    expect(second?.messages().slice(0, first?.messages().length)).toEqual(first?.messages());
    for (const message of first?.messages() ?? []) {
      const copies = Object.values(trace.blobs).filter((b) => canonicalJson(b) === canonicalJson(message));
      expect(copies).toHaveLength(1);
    }
  });

  it('attach() records the emitted events of an actor created without the inspector', async () => {
    const recorder = recordTrace();
    const actor = weatherAgent().createActor(question());
    const detach = recorder.attach(actor);
    actor.subscribe({ error: (error) => expect.fail(String(error)) });
    actor.start();
    actor.send({ type: 'execute' });
    await waitForState(actor, (s) => s.value === 'completed');
    const trace = recorder.trace();
    expect(ofKind(trace, 'emitted').map((e) => e.type)).toEqual(LOOP_EVENTS);
    expect(ofKind(trace, 'snapshot')).toHaveLength(0);
    expect(trace.actors.map((a) => a.actor)).toEqual([actor.sessionId]);
    expect(traceStates(trace)[0]?.state.toJSON()).toEqual(actor.getSnapshot().context.state.toJSON());
    expect(ofKind(trace, 'state').map((c) => c.reason)).toEqual(['execution.finished']);
    detach();
    actor.stop();
  });

  it('attach() together with inspect records each emitted event once', async () => {
    const recorder = recordTrace();
    const actor = weatherAgent().createActor(question(), { inspect: recorder.inspect });
    recorder.attach(actor);
    actor.subscribe({ error: (error) => expect.fail(String(error)) });
    actor.start();
    actor.send({ type: 'execute' });
    await waitForState(actor, (s) => s.value === 'completed');
    actor.stop();
    expect(ofKind(recorder.trace(), 'emitted').map((e) => e.type)).toEqual(LOOP_EVENTS);
  });

  it('writes the trace to a file that readTrace accepts', async () => {
    const { recorder } = await recordedRun();
    const dir = await mkdtemp(join(tmpdir(), 'trace-'));
    const path = join(dir, 'nested', 'trace.json');
    const written = await recorder.write(path);
    expect(readTrace(await readFile(path, 'utf8'))).toEqual(written);
  });

  it('records what it cannot serialize as an issue, without disturbing the run', async () => {
    const recorder = recordTrace();
    const actor = weatherAgent().createActor(question(), { inspect: recorder.inspect });
    actor.subscribe({ error: (error) => expect.fail(String(error)) });
    actor.start();
    const hostile = {
      toJSON() {
        throw new Error('cannot serialize me');
      },
    };
    actor.send({ type: 'user.note', value: hostile } as never);
    actor.send({ type: 'execute' });
    await waitForState(actor, (s) => s.value === 'completed');
    actor.stop();
    const trace = recorder.trace();
    expect(ofKind(trace, 'issue').map((e) => e.message)).toEqual(['@xstate.event: cannot serialize me']);
    expect(traceStates(trace)[0]?.state.status()).toBe(ExecutionStatus.Completed);
    expect(() => readTrace(trace)).not.toThrow();
  });

  it('puts large payloads in the blob table', async () => {
    const recorder = recordTrace({ inlineLimit: 50 });
    const actor = weatherAgent().createActor(question(), { inspect: recorder.inspect });
    actor.subscribe({ error: (error) => expect.fail(String(error)) });
    actor.start();
    actor.send({ type: 'user.message', text: 'x'.repeat(200) });
    await waitForState(actor, (s) => s.value === 'completed');
    actor.stop();
    const trace = readTrace(recorder.trace());
    const event = ofKind(trace, 'event').find((e) => e.type === 'user.message');
    expect(event?.payload).toBeUndefined();
    expect(trace.blobs[event?.payloadBlob as string]).toEqual({ text: 'x'.repeat(200) });
  });
});

describe('readTrace', () => {
  const base = async () => JSON.parse(JSON.stringify((await recordedRun()).recorder.trace())) as Trace;

  const failure = (data: unknown): InvalidTraceError => {
    try {
      readTrace(data);
    } catch (error) {
      expect(error).toBeInstanceOf(InvalidTraceError);
      return error as InvalidTraceError;
    }
    throw new Error('readTrace accepted bad data');
  };

  it('names the path of a bad field', async () => {
    const trace = await base();
    (trace.entries[2] as { t: number }).t = -1;
    const error = failure(trace);
    expect(error.code).toBe('INVALID_TRACE');
    expect(error.path).toBe('entries[2].t');
    expect(error.message).toMatch(/^Invalid trace at entries\[2\]\.t: /);
  });

  it('names an unknown entry kind and an unknown key', async () => {
    const trace = await base();
    (trace.entries[0] as { kind: string }).kind = 'dance';
    expect(failure(trace).path).toBe('entries[0].kind');
    const other = await base();
    (other.actors[0] as Record<string, unknown>).colour = 'red';
    const error = failure(other);
    expect(error.path).toBe('actors[0]');
    expect(error.detail).toBe('unknown key(s) "colour"');
  });

  it('refuses another version and other formats', async () => {
    const trace = await base();
    expect(failure({ ...trace, version: 2 })).toMatchObject({
      path: 'version',
      detail: 'unsupported trace version 2 (this library reads version 1)',
    });
    expect(failure({ ...trace, format: 'something-else' }).path).toBe('format');
  });

  it('refuses truncated JSON text', async () => {
    const text = JSON.stringify(await base());
    const error = failure(text.slice(0, text.length / 2));
    expect(error.path).toBe('');
    expect(error.message).toMatch(/^Invalid trace at \(root\): not valid JSON/);
  });

  it('names a reference to a missing blob', async () => {
    const trace = await base();
    const hash = trace.agents[0]?.state as string;
    const packed = trace.blobs[hash] as { context: { messages: { messages: Array<{ $blob: string }> } } };
    const messageHash = packed.context.messages.messages[0]?.$blob as string;
    delete trace.blobs[messageHash];
    const error = failure(trace);
    expect(error.path).toMatch(/^blobs\.[A-Za-z0-9_-]{22}\.context\.messages\.messages\[0\]\.\$blob$/);
    expect(error.detail).toBe(`refers to blob ${messageHash}, which is not in blobs`);

    const other = await base();
    delete other.blobs[other.agents[0]?.state as string];
    expect(failure(other).path).toBe(
      'entries[' + other.entries.findIndex((e) => e.kind === 'state') + '].state',
    );
  });

  it('names the field of a stored state that does not decode', async () => {
    const trace = await base();
    const hash = trace.agents[0]?.state as string;
    (trace.blobs[hash] as { executionCount: unknown }).executionCount = 'many';
    const checked = readTrace(trace); // the blob table itself is well-formed
    expect(() => traceStates(checked)).toThrow(InvalidTraceError);
    try {
      traceStates(checked);
    } catch (error) {
      expect((error as InvalidTraceError).path).toBe(`agents[0].state (blobs.${hash}).executionCount`);
    }
  });
});

describe('content hashes', () => {
  it('hashes canonical JSON: key order does not matter, content does', () => {
    expect(canonicalJson({ b: 1, a: [true, null, undefined], c: undefined })).toBe(
      '{"a":[true,null,null],"b":1}',
    );
    expect(canonicalJson({ 10: 'a', 2: 'b', $: 'c' })).toBe('{"$":"c","10":"a","2":"b"}');
    expect(contentHash(canonicalJson({ a: 1, b: 2 }))).toBe(contentHash(canonicalJson({ b: 2, a: 1 })));
    expect(contentHash(canonicalJson({ a: 1 }))).not.toBe(contentHash(canonicalJson({ a: 2 })));
    expect(contentHash('x')).toMatch(/^[A-Za-z0-9_-]{22}$/);
  });

  it("is the journal's key for stored content, unchanged: 22 characters of the base64url SHA-256", () => {
    for (const text of ['', 'x'.repeat(300), 'é ∑ 😀 <script>'])
      expect(contentHash(text)).toBe(createHash('sha256').update(text).digest('base64url').slice(0, 22));
  });

  it('the portable SHA-256 agrees with Node crypto', () => {
    for (const text of ['', 'abc', 'é ∑ 😀 <script>', 'x'.repeat(55), 'y'.repeat(64), 'z'.repeat(1000)]) {
      expect(sha256Portable(text)).toBe(createHash('sha256').update(text, 'utf8').digest('hex'));
      expect(sha256Base64(text)).toBe(createHash('sha256').update(text, 'utf8').digest('base64'));
    }
  });
});
