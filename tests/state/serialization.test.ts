import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AgentError } from '../../src/state/agent-error';
import { AgentState } from '../../src/state/agent-state';
import { AgentStep, InferenceResponse } from '../../src/state/agent-step';
import { InvalidStateError } from '../../src/state/errors';
import { ExecutionContinuation } from '../../src/state/execution-continuation';
import { ExecutionState } from '../../src/state/execution-state';
import { Message } from '../../src/state/message';
import { StepExecution } from '../../src/state/step-execution';
import { StopReason } from '../../src/state/stop-reason';
import { StopSignal } from '../../src/state/stop-signal';
import { ToolExecution } from '../../src/state/tool-execution';
import { Usage } from '../../src/state/usage';

const roundTrip = (state: AgentState) => AgentState.fromJSON(JSON.parse(JSON.stringify(state)));

function sampleState(): AgentState {
  const call = { id: 'c1', name: 'search', args: { q: 'ünïcødé 🚀', nested: [1, { deep: null }] } };
  let state = AgentState.empty({ parentAgentId: 'parent-1' })
    .withSystemPrompt('You search.')
    .withUserMessage('Find it')
    .withMetadata('tenant', { id: 7, tags: ['a'] })
    .withLlmConfig({ model: 'gpt-x', temperature: 0 })
    .withResponseFormat({ type: 'json', schema: { type: 'object' }, name: 'Answer' })
    .withExecutionStarted();
  const step1 = AgentStep.of({
    inputMessages: state.messages(),
    outputMessages: [Message.assistant('', [call]), Message.toolResult(call, '{"hits":1}')],
    inferenceResponse: InferenceResponse.of({
      toolCalls: [call],
      finishReason: 'tool-calls',
      usage: Usage.of({ inputTokens: 3, outputTokens: 4, cost: 0.01 }),
    }),
    toolExecutions: [ToolExecution.succeeded(call, { hits: 1 }, 1000, 1500)],
  });
  state = state.withStepStarted().withCurrentStep(step1).withCurrentStepRecorded();
  const step2 = AgentStep.of({
    inputMessages: state.messages(),
    outputMessages: [Message.assistant('Found')],
    inferenceResponse: InferenceResponse.of({ text: 'Found', finishReason: 'stop' }),
    errors: [AgentError.of('Warn', 'minor', 'W1', { line: 3 })],
  });
  return state
    .withStepStarted()
    .withCurrentStep(step2)
    .withStopSignal(StopSignal.of(StopReason.FinishReasonReceived, 'stop', { finishReason: 'stop' }, 'guard'))
    .withCurrentStepRecorded()
    .withExecutionCompleted();
}

describe('AgentState serialization', () => {
  it('toJSON() is a flat object with the pinned top-level keys', () => {
    const json = JSON.parse(JSON.stringify(AgentState.empty()));
    expect(Object.keys(json).sort()).toEqual(
      [
        'agentId',
        'context',
        'createdAt',
        'execution',
        'executionCount',
        'formatVersion',
        'llmConfig',
        'parentAgentId',
        'updatedAt',
      ].sort(),
    );
    expect(typeof json.agentId).toBe('string');
    expect(json.execution).toBeNull();
  });

  it('round-trips a whole execution to an equal state', () => {
    const state = sampleState();
    const restored = roundTrip(state);
    expect(restored.toJSON()).toEqual(state.toJSON());
    expect(restored.status()).toBe(state.status());
    expect(restored.stepCount()).toBe(2);
    expect(restored.usage()).toEqual(state.usage());
    expect(restored.steps()[1]?.inputMessages()).toEqual(state.steps()[1]?.inputMessages());
    expect(restored.errors()).toEqual(state.errors());
    expect(restored.lastStep()?.outputText()).toBe('Found');
    expect(restored.finalResponse()).toBe(''); // the last step carries an error, so it is no final response
    expect(restored.lastToolExecution()?.value()).toEqual({ hits: 1 });
    expect(restored.stopReason()).toBe(StopReason.FinishReasonReceived);
  });

  it('accepts the JSON text as well as the parsed object', () => {
    const state = sampleState();
    expect(AgentState.fromJSON(JSON.stringify(state)).toJSON()).toEqual(state.toJSON());
  });

  it('holds frozen messages, parts and metadata read from JSON text or an object, as a built state does', () => {
    const state = sampleState()
      .withUserMessage([
        { type: 'text', text: 'and this' },
        { type: 'file', mediaType: 'text/plain', data: 'eA==' },
      ])
      .withCurrentStepRecorded();
    const text = JSON.stringify(state);
    for (const loaded of [AgentState.fromJSON(text), AgentState.fromJSON(JSON.parse(text))]) {
      const messages = [...loaded.messages(), ...loaded.steps().flatMap((s) => s.outputMessages())];
      expect(messages.length).toBeGreaterThan(4);
      for (const message of messages) {
        expect(Object.isFrozen(message)).toBe(true);
        expect(Object.isFrozen(message.metadata)).toBe(true);
        for (const part of message.parts ?? []) expect(Object.isFrozen(part)).toBe(true);
        if (message.parts) expect(Object.isFrozen(message.parts)).toBe(true);
      }
      expect(loaded.toJSON()).toEqual(state.toJSON());
    }
  });

  it('stores step input messages once, by reference to the conversation', () => {
    const json = sampleState().toJSON();
    const inputs = json.execution?.stepExecutions.map((s) => s.step.inputMessages);
    expect(inputs).toEqual([[{ $ref: [0, 1] }], [{ $ref: [0, 3] }]]);
  });

  it('leaves out the transient step in flight and its output messages', () => {
    const running = AgentState.empty()
      .withUserMessage('q')
      .withExecutionStarted()
      .withStepStarted()
      .withCurrentStep(AgentStep.of({ outputMessages: [Message.assistant('partial')] }));
    const json = JSON.parse(JSON.stringify(running));
    expect(json.execution.currentStep).toBeUndefined();
    expect(json.execution.currentStepStartedAt).toBeUndefined();
    const restored = AgentState.fromJSON(json);
    expect(restored.currentStep()).toBeNull();
    expect(restored.messages().map((m) => m.content)).toEqual(['q']);
    expect(restored.status()).toBe('in_progress');
  });

  it('round-trips each part on its own', () => {
    const state = sampleState();
    const stepExecution = state.stepExecutions()[0] as StepExecution;
    const rt = <T extends { toJSON(): unknown }>(value: T, from: (d: unknown) => T) =>
      expect(from(JSON.parse(JSON.stringify(value))).toJSON()).toEqual(
        JSON.parse(JSON.stringify(value.toJSON())),
      );
    rt(stepExecution, StepExecution.fromJSON);
    rt(stepExecution.step(), AgentStep.fromJSON);
    rt(stepExecution.step().toolExecutions()[0] as ToolExecution, ToolExecution.fromJSON);
    rt(state.execution()?.continuation() as ExecutionContinuation, ExecutionContinuation.fromJSON);
    rt(state.execution() as ExecutionState, ExecutionState.fromJSON);
  });

  describe('bad input raises one InvalidStateError naming the path of the first bad field', () => {
    const good = () => JSON.parse(JSON.stringify(sampleState()));
    const expectInvalid = (data: unknown, path: string | RegExp) => {
      let error: unknown;
      try {
        AgentState.fromJSON(data);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(InvalidStateError);
      const invalid = error as InvalidStateError;
      expect(invalid.code).toBe('INVALID_STATE');
      if (typeof path === 'string') expect(invalid.path).toBe(path);
      else expect(invalid.path).toMatch(path);
      expect(invalid.message).toContain('Invalid AgentState at');
      return invalid;
    };

    it('wrong type', () => {
      const data = good();
      data.executionCount = 'one';
      expectInvalid(data, 'executionCount');
    });
    it('missing field', () => {
      const data = good();
      delete data.execution.stepExecutions[1].step.inferenceResponse.usage;
      expectInvalid(data, 'execution.stepExecutions[1].step.inferenceResponse.usage');
    });
    it('unknown status', () => {
      const data = good();
      data.execution.status = 'exploded';
      const error = expectInvalid(data, 'execution.status');
      expect(error.message).toContain('"in_progress"');
    });
    it('unknown stop reason', () => {
      const data = good();
      data.execution.continuation.stopSignals[0].reason = 'bored';
      expectInvalid(data, 'execution.continuation.stopSignals[0].reason');
    });
    it('a __proto__ key where the format has no such field', () => {
      const text = JSON.stringify(good()).replace('"context":{', '"context":{"__proto__":{"polluted":true},');
      expectInvalid(JSON.parse(text), 'context');
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    });
    it('a truncated document', () => {
      const text = JSON.stringify(good());
      expectInvalid(text.slice(0, text.length / 2), '');
    });
    it('not an object at all', () => {
      expectInvalid(null, '');
      expectInvalid(42, '');
      expectInvalid([], '');
    });
    it('an unknown key', () => {
      const data = good();
      data.execution.surprise = 1;
      expect(expectInvalid(data, 'execution').message).toContain('"surprise"');
    });
    it('an unknown format version', () => {
      const data = good();
      data.formatVersion = 99;
      expectInvalid(data, 'formatVersion');
    });
    it('a bad message inside the conversation', () => {
      const data = good();
      data.context.messages.messages[1].role = 'robot';
      expectInvalid(data, 'context.messages.messages[1].role');
    });
    it('a message reference outside the conversation', () => {
      const data = good();
      data.execution.stepExecutions[1].step.inputMessages = [{ $ref: [0, 99] }];
      expectInvalid(data, 'execution.stepExecutions[1].step.inputMessages[0].$ref');
    });
    it('a bad date', () => {
      const data = good();
      data.createdAt = 'yesterday';
      expectInvalid(data, 'createdAt');
    });
    it('never throws a bare TypeError for arbitrary JSON', () => {
      fc.assert(
        fc.property(fc.jsonValue(), (value) => {
          try {
            AgentState.fromJSON(value);
          } catch (e) {
            return e instanceof InvalidStateError;
          }
          return false;
        }),
        { numRuns: 300 },
      );
    });
    it('never throws a bare TypeError when any single field of a valid state is damaged', () => {
      const paths: string[][] = [];
      const walk = (v: unknown, p: string[]) => {
        if (v && typeof v === 'object') for (const [k, c] of Object.entries(v)) walk(c, [...p, k]);
        paths.push(p);
      };
      walk(good(), []);
      fc.assert(
        fc.property(
          fc.constantFrom(...paths.filter((p) => p.length > 0)),
          fc.jsonValue(),
          (path, replacement) => {
            const data = good();
            let target = data;
            for (const key of path.slice(0, -1)) target = target[key];
            target[path[path.length - 1] as string] = replacement;
            try {
              AgentState.fromJSON(data);
              return true;
            } catch (e) {
              return e instanceof InvalidStateError && e.path.length >= 0;
            }
          },
        ),
        { numRuns: 300 },
      );
    });
  });

  describe('property: any generated state round-trips to an equal state', () => {
    const text = fc.oneof(
      fc.string(),
      fc.string({ unit: 'grapheme' }),
      fc.constant(''),
      fc.constant('x'.repeat(100_000)),
    );
    // Own `__proto__` keys and other hostile values: tests/state/hostile-values.property.test.ts.
    const json = fc.jsonValue().filter((v) => !JSON.stringify(v).includes('"__proto__"'));
    const args = fc.dictionary(
      fc.string().filter((k) => k !== '__proto__'),
      json,
      { maxKeys: 3 },
    );
    const toolCall = fc.record({ id: fc.uuid(), name: fc.string({ minLength: 1 }), args });
    const usage = fc.record({ inputTokens: fc.nat(), outputTokens: fc.nat() }).map((u) => Usage.of(u));
    const reason = fc.constantFrom(...Object.values(StopReason));
    const step = fc.record({
      text,
      calls: fc.array(toolCall, { maxLength: 3 }),
      usage,
      failing: fc.boolean(),
      error: fc.option(text, { nil: undefined }),
      signal: fc.option(reason, { nil: undefined }),
      continued: fc.boolean(),
    });
    const scenario = fc.record({
      system: text,
      user: text,
      meta: args,
      steps: fc.array(step, { maxLength: 6 }),
      finish: fc.constantFrom('completed', 'failed', 'running', 'next'),
    });

    it('round-trips', () => {
      fc.assert(
        fc.property(scenario, (s) => {
          let state = AgentState.empty()
            .withSystemPrompt(s.system)
            .withUserMessage(s.user)
            .withContext(
              Object.entries(s.meta).reduce(
                (ctx, [k, v]) => ctx.withMetadata(k, v),
                AgentState.empty().context(),
              ),
            )
            .withUserMessage(s.user)
            .withExecutionStarted();
          for (const st of s.steps) {
            const executions = st.calls.map((c, i) =>
              st.failing && i === 0
                ? ToolExecution.failed(c, new RangeError(st.text), 10)
                : ToolExecution.succeeded(c, c.args, 10, 20),
            );
            let agentStep = AgentStep.of({
              inputMessages: state.messages(),
              outputMessages: [
                Message.assistant(st.text, st.calls),
                ...st.calls.map((c) => Message.toolResult(c, st.text)),
              ],
              inferenceResponse: InferenceResponse.of({
                text: st.text,
                toolCalls: st.calls,
                usage: st.usage,
                finishReason: 'stop',
              }),
              toolExecutions: executions,
            });
            if (st.error !== undefined) agentStep = agentStep.withError(AgentError.of('E', st.error));
            state = state.withStepStarted().withCurrentStep(agentStep);
            if (st.signal) state = state.withStopSignal(StopSignal.of(st.signal, st.text, { n: 1 }, 'prop'));
            if (st.continued) state = state.withContinuationRequested();
            state = state.withCurrentStepRecorded();
          }
          if (s.finish === 'failed') state = state.withFailure(new Error(s.user)).withExecutionCompleted();
          if (s.finish === 'completed') state = state.withExecutionCompleted();
          if (s.finish === 'next') state = state.withExecutionCompleted().forNextExecution();
          const restored = roundTrip(state);
          expect(restored.toJSON()).toEqual(JSON.parse(JSON.stringify(state.toJSON())));
          expect(restored.stepCount()).toBe(state.stepCount());
          expect(restored.usage()).toEqual(state.usage());
          expect(restored.stopReason()).toBe(state.stopReason());
          const plain = (v: unknown) => JSON.parse(JSON.stringify(v)); // JSON has no -0
          expect(plain(restored.messages())).toEqual(plain(state.messages()));
        }),
        { numRuns: 100 },
      );
    });
  });
});
